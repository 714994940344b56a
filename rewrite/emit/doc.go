// Package emit writes what migrate changed, file by file, as it is made:
// a unified diff on stdout (Diff), the files in place (Write), a migrated
// copy of the input trees (Tree), or the migrated stream (Stream).
//
// An Emitter's Begin starts one file's output; its text arrives in pieces
// (Equal for bytes that stay, Change for a replaced piece, in file order)
// and nothing reaches its destination before Commit: the output is spooled
// in memory and, past 8 MB, in a temporary file beside the destination.
// Abort leaves everything as if the file had not been read (a stream is
// passed on as it came), so a file that fails part-way is never half
// written, diffed or printed, and the diff is always what -w writes.
//
// The diff of a file is made piece by piece with go-internal's anchored
// diff and merged into hunks with three lines of context exactly as one
// diff of the whole file would merge them, so a 50 MB file is diffed one
// document at a time; a file that is one piece gets diff.Diff's output.
//
// Write replaces a file atomically and only when it changed (an unchanged
// file keeps its inode and mtime), keeping its mode; WriteFileMode is
// kubedra's one atomic write (a temporary file in the same folder, synced,
// then renamed). emit never changes content: it writes what it is given.
package emit

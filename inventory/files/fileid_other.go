//go:build !unix

package files

// fileID identifies the file at path however it is named: its real path
// (hard links are not recognised on this platform).
func fileID(path string) (any, bool) { return realPath(path) }

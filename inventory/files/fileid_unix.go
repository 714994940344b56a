//go:build unix

package files

import (
	"os"
	"syscall"
)

// fileID identifies the file at path however it is named: its device and
// inode, so that hard links and symlinks to one file are one input.
func fileID(path string) (any, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // Dev is int32 on darwin
	}
	return realPath(path)
}

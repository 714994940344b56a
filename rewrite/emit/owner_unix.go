//go:build unix

package emit

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file old describes. A
// failure is an error: writing would change who owns the file.
func keepOwner(f *os.File, old fs.FileInfo) error {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid, gid := int(st.Uid), int(st.Gid)
	if uid == os.Geteuid() && gid == os.Getegid() {
		return nil
	}
	if err := f.Chown(uid, gid); err != nil {
		return fmt.Errorf("cannot keep the owner %d:%d (%w); run as that user, or as root", uid, gid, err)
	}
	return nil
}

// links is how many hard links the file fi describes has (1 when unknown).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

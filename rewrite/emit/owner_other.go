//go:build !unix

package emit

import (
	"io/fs"
	"os"
)

// keepOwner is a no-op where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) error { return nil }

// links is 1 where hard links are not counted.
func links(fs.FileInfo) uint64 { return 1 }

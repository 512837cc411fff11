//go:build linux

package tools

import (
	"io/fs"
	"syscall"
)

// fileID is what tells one file from another beyond its name and mtime:
// its device and inode, and its ctime, which every write and every
// change of its times moves.
type fileID struct {
	dev, ino uint64
	ctime    int64 // nanoseconds
}

func idOf(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}
}

package walsync

import (
	"os"
	"syscall"
)

// datasync is fdatasync(2), as SQLite syncs its own log: the frames and
// the file's size, not its times. A log written over in place (SQLite
// restarts it from the beginning after a checkpoint) then needs no
// journal commit of the file system, which would wait for the data every
// other writer has in flight (ext4's ordered mode).
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

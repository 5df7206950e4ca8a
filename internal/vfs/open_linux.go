package vfs

import (
	"os"
	"syscall"
)

// openFile is os.OpenFile without the runtime poller. os.OpenFile tries to
// register every file with epoll, which Linux refuses for regular files
// and directories: four fcntl calls and a failed epoll_ctl on each open,
// two thirds of the syscalls of opening a file. A broker opening 10 000
// partitions at start made 80 000 of them. os.NewFile on a blocking
// descriptor skips the poller, so reads and writes are the plain blocking
// syscalls they were anyway.
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

//go:build unix

package logstore

import "syscall"

// descriptorLimit is the process's soft limit on open files (Go raises it
// to the hard limit at start on Linux), or 0 if unknown.
func descriptorLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}

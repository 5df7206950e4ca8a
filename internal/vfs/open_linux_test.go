package vfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// OS files are opened as os.OpenFile opens them (mode, close-on-exec),
// minus the poller: blocking descriptors that a child process does not
// inherit.
func TestOpenFileLikeOSOpenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := OS{}.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v (%v), want 0600", st.Mode(), err)
	}
	osf := f.(interface{ OS() *os.File }).OS()
	raw, err := osf.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fdFlags, flFlags int
	raw.Control(func(fd uintptr) {
		fdFlags, _ = fcntl(fd, syscall.F_GETFD)
		flFlags, _ = fcntl(fd, syscall.F_GETFL)
	})
	if fdFlags&syscall.FD_CLOEXEC == 0 {
		t.Error("descriptor without close-on-exec")
	}
	if flFlags&syscall.O_NONBLOCK != 0 {
		t.Error("descriptor is non-blocking")
	}
	if _, err := f.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "hello" {
		t.Fatalf("read back %q, %v", buf, err)
	}
}

func fcntl(fd uintptr, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

package protocol

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recordingListener hands the server its accepted connections and keeps
// them, so the test can read their socket options.
type recordingListener struct {
	net.Listener
	accepted chan net.Conn
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted <- c
	}
	return c, err
}

func sndbuf(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		n, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return n
}

// Each accepted connection gets Config.SendBufferBytes (Linux reports
// twice the value set), 256 KiB by default; -1 leaves the kernel's own.
func TestSendBufferBytes(t *testing.T) {
	h := HandlerFunc(func(_ context.Context, req *Request) Reply { return Reply{} })
	for _, tc := range []struct {
		name string
		set  int
		want int // what getsockopt reports; 0: not the default's
	}{
		{"default", 0, 2 * DefaultSendBufferBytes},
		{"explicit", 128 << 10, 2 * (128 << 10)},
		{"os autotuning", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			rl := &recordingListener{Listener: ln, accepted: make(chan net.Conn, 1)}
			s := startServer(t, Config{Listener: rl, SendBufferBytes: tc.set}, h)
			dial(t, s)
			c := <-rl.accepted
			// The option is set before the connection is registered.
			for s.Conns() == 0 {
				time.Sleep(time.Millisecond)
			}
			got := sndbuf(t, c)
			switch {
			case tc.want > 0 && got != tc.want:
				t.Fatalf("SO_SNDBUF %d, want %d", got, tc.want)
			case tc.want == 0 && got == 2*DefaultSendBufferBytes:
				t.Fatalf("SO_SNDBUF %d: set although -1 asks for the OS default", got)
			}
		})
	}
}

func sockopt(t *testing.T, c net.Conn, level, opt int) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	if err := raw.Control(func(fd uintptr) { n, serr = syscall.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return n
}

// TestKeepAliveOSDefaults: accepted connections have TCP keepalive on with
// the kernel's idle time (net.ipv4.tcp_keepalive_time), as Kafka's, not
// Go's 15 s.
func TestKeepAliveOSDefaults(t *testing.T) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/tcp_keepalive_time")
	if err != nil {
		t.Fatalf("reading the kernel's keepalive time: %v", err)
	}
	osIdle, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	h := HandlerFunc(func(_ context.Context, req *Request) Reply { return Reply{} })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := &recordingListener{Listener: ln, accepted: make(chan net.Conn, 1)}
	s := startServer(t, Config{Listener: rl}, h)
	dial(t, s)
	c := <-rl.accepted
	for s.Conns() == 0 {
		time.Sleep(time.Millisecond)
	}
	if on := sockopt(t, c, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); on != 1 {
		t.Fatalf("SO_KEEPALIVE %d, want 1", on)
	}
	if idle := sockopt(t, c, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE); idle != osIdle {
		t.Fatalf("TCP_KEEPIDLE %d s, want the kernel's %d s (Go's listener default is 15 s)", idle, osIdle)
	}
}

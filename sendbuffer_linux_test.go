package minikafka_test

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
)

type keepAccepted struct {
	net.Listener
	accepted chan net.Conn
}

func (l keepAccepted) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.accepted <- c:
		default:
		}
	}
	return c, err
}

// WithSocketSendBufferBytes reaches the client connections (Linux reports
// twice the SO_SNDBUF set).
func TestSocketSendBufferOption(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kl := keepAccepted{Listener: ln, accepted: make(chan net.Conn, 1)}
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListener(kl),
		minikafka.WithSocketSendBufferBytes(96<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc := (<-kl.accepted).(*net.TCPConn)
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		raw.Control(func(fd uintptr) { n, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) })
		if n == 2*(96<<10) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SO_SNDBUF %d, want %d", n, 2*(96<<10))
		}
		time.Sleep(time.Millisecond)
	}
}

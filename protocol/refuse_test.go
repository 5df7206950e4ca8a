package protocol

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Down refuses connections (the port unbound) and Up binds the same
// address again and serves; repeated, and with Close while down.
func TestSetRefusingUnbinds(t *testing.T) {
	srv, err := Listen(Config{Addr: "127.0.0.1:0"}, HandlerFunc(func(_ context.Context, req *Request) Reply {
		resp := req.Body.ResponseKind()
		resp.SetVersion(req.Version)
		return Reply{Response: resp}
	}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	addr := srv.Addr().String()
	served := func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		send(t, c, frame(1, nil, kmsg.NewPtrApiVersionsRequest()))
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _, err = readFrame(c)
		return err == nil
	}
	for round := range 3 {
		if !served() {
			t.Fatalf("round %d: not served while up", round)
		}
		if err := srv.SetRefusing(true); err != nil {
			t.Fatal(err)
		}
		if _, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("round %d: dial while down: %v, want connection refused", round, err)
		}
		if err := srv.SetRefusing(false); err != nil {
			t.Fatal(err)
		}
	}
	if !served() {
		t.Fatal("not served after the last Up")
	}
	_ = srv.SetRefusing(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve after Close while down: %v", err)
	}
}

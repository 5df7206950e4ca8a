package minikafka_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/minikafka/minikafka"
)

// stallReadTimeout is the request read timeout of the stall tests: long
// enough that the clients' p99 is measured while every stalled request is
// still open, short enough for a test.
const stallReadTimeout = 4 * time.Second

// TestStalledRequestsDoNotFreezeTheBroker is issue 32's reproducer: n
// connections each send a length prefix of 64 to 100 MiB and 1 MiB of the
// body, then nothing. While they stay open a kgo producer (with requests
// over the 64 KiB small-frame line, so they need request memory) and a
// consumer keep working with a p99 under a second, and every stalled
// connection is closed by the broker after the request read timeout.
func TestStalledRequestsDoNotFreezeTheBroker(t *testing.T) {
	for _, n := range []int{2, 8, 64} {
		t.Run(fmt.Sprintf("stalled=%d", n), func(t *testing.T) {
			b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
				minikafka.WithRequestReadTimeout(stallReadTimeout), minikafka.WithTopic("work", 1))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			stalled := stallConnections(t, b.Addr(), n, nil)
			keepsWorking(t, b.Addr(), nil)
			closedAfterReadTimeout(t, stalled)
		})
	}
}

// TestStalledRequestsWithSASL: the same with SASL on and the authorizer
// enforcing ACLs; the stalled connections authenticate as a principal
// that no ACL allows anything.
func TestStalledRequestsWithSASL(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
		minikafka.WithRequestReadTimeout(stallReadTimeout), minikafka.WithTopic("work", 1),
		minikafka.WithSASL(map[string]string{"app": "app-pw", "mallory": "m-pw"}, "PLAIN"),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:app"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	auth := func(c net.Conn) error {
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "PLAIN"
		if _, err := saslFrame(t, c, 1, hs); err != nil {
			return err
		}
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.Version, au.SASLAuthBytes = 1, []byte("\x00mallory\x00m-pw")
		body, err := saslFrame(t, c, 2, au)
		if err != nil {
			return err
		}
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.Version = 1
		if err := resp.ReadFrom(body); err != nil {
			return err
		}
		if resp.ErrorCode != 0 {
			return fmt.Errorf("authenticate: error %d", resp.ErrorCode)
		}
		return nil
	}
	stalled := stallConnections(t, b.Addr(), 8, auth)
	keepsWorking(t, b.Addr(), []kgo.Opt{kgo.SASL(plain.Auth{User: "app", Pass: "app-pw"}.AsMechanism())})
	closedAfterReadTimeout(t, stalled)
}

// stallConnections opens n connections (authenticated by auth when set),
// each announcing a 64–100 MiB request and sending its first MiB.
func stallConnections(t *testing.T, addr string, n int, auth func(net.Conn) error) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	body := make([]byte, 1<<20)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if auth != nil {
			if err := auth(c); err != nil {
				t.Fatalf("stalled connection %d: %v", i, err)
			}
		}
		size := 64<<20 + int64(i)*(36<<20)/int64(n)
		prefix := binary.BigEndian.AppendUint32(nil, uint32(size))
		if _, err := c.Write(append(prefix, body...)); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns
}

// keepsWorking produces 40 requests of 100 KiB records one at a time and
// reads them back, and fails unless the produce p99 is under a second.
func keepsWorking(t *testing.T, addr string, opts []kgo.Opt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("work"),
		kgo.ConsumeTopics("work"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 40
	var lat []time.Duration
	for i := range n {
		v := make([]byte, 100<<10)
		binary.BigEndian.PutUint32(v, uint32(i))
		t0 := time.Now()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("produce p50 %v p99 %v max %v", lat[len(lat)/2], p99, lat[len(lat)-1])
	if p99 > time.Second {
		t.Fatalf("produce p99 %v while requests are stalled", p99)
	}
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if binary.BigEndian.Uint32(r.Value) != uint32(got) {
				t.Fatalf("record %d holds %d", got, binary.BigEndian.Uint32(r.Value))
			}
			got++
		})
	}
}

// closedAfterReadTimeout checks that the broker closes every stalled
// connection within the read timeout (plus a margin for a loaded machine).
func closedAfterReadTimeout(t *testing.T, conns []net.Conn) {
	t.Helper()
	deadline := time.Now().Add(stallReadTimeout + 10*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(deadline)
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				errs <- fmt.Errorf("stalled connection %d still open after the read timeout", i)
			} else if err == nil {
				errs <- fmt.Errorf("stalled connection %d got an answer", i)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				// A reset is a close too.
				var oe *net.OpError
				if !errors.As(err, &oe) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

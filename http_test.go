package minikafka_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHTTPAddrOptions(t *testing.T) {
	for _, c := range []struct {
		opts []minikafka.Option
		want string // "" for a start, else a piece of the error
		bind string // the bound host
	}{
		{[]minikafka.Option{minikafka.WithHTTPAddr(":0")}, "", "127.0.0.1"},
		{[]minikafka.Option{minikafka.WithHTTPAddr("localhost:0")}, "", "127.0.0.1"},
		{[]minikafka.Option{minikafka.WithHTTPAddr("0.0.0.0:0")}, "WithHTTPAddrAny", ""},
		{[]minikafka.Option{minikafka.WithHTTPAddr("[::]:0")}, "WithHTTPAddrAny", ""},
		{[]minikafka.Option{minikafka.WithHTTPAddr("0.0.0.0:0"), minikafka.WithHTTPAddrAny()}, "", "::"},
		{[]minikafka.Option{minikafka.WithHTTPAddr(":0"), minikafka.WithHTTPAddrAny()}, "", "::"},
		{[]minikafka.Option{minikafka.WithHTTPAddr("8080")}, "missing port", ""},
		{[]minikafka.Option{minikafka.WithHTTPAddr("127.0.0.1:http")}, "bad port", ""},
	} {
		b, err := minikafka.Start(context.Background(), append([]minikafka.Option{minikafka.WithInMemory()}, c.opts...)...)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%d: error %v, want %q", len(c.opts), err, c.want)
			}
			if b != nil {
				b.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		// "::" stands for any wildcard (Go binds 0.0.0.0 dual-stack).
		if ta := b.HTTPAddr().(*net.TCPAddr); ta.IP.String() != c.bind && !(c.bind == "::" && ta.IP.IsUnspecified()) {
			t.Errorf("bound to %v, want host %s", ta, c.bind)
		}
		b.Close()
	}
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.HTTPAddr() != nil {
		t.Errorf("HTTP on by default: %v", b.HTTPAddr())
	}
}

// gateFS holds storage recovery (its first directory listing) until open
// is closed.
type gateFS struct {
	minikafka.FS
	open chan struct{}
}

func (g gateFS) ReadDir(dir string) ([]string, error) {
	<-g.open
	return g.FS.ReadDir(dir)
}

// TestReadyz: /healthz answers while storage recovers and /readyz says
// 503 until Start has returned, 200 after, 503 once closed... by which
// time the listener is gone.
func TestReadyz(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	gate := gateFS{FS: minikafka.OSFS(), open: make(chan struct{})}
	started := make(chan error, 1)
	var b *minikafka.Broker
	go func() {
		var err error
		b, err = minikafka.Start(context.Background(), minikafka.WithFS(gate), minikafka.WithDataDir(t.TempDir()), minikafka.WithHTTPAddr(addr))
		started <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the HTTP listener never came up: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st, body := httpGet(t, "http://"+addr+"/healthz"); st != 200 {
		t.Errorf("healthz while recovering: %d %s", st, body)
	}
	if st, body := httpGet(t, "http://"+addr+"/readyz"); st != 503 || !strings.Contains(body, "starting") {
		t.Errorf("readyz while recovering: %d %s", st, body)
	}
	if st, _ := httpGet(t, "http://"+addr+"/api/overview"); st != 503 {
		t.Errorf("console while recovering: %d", st)
	}
	close(gate.open)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if st, body := httpGet(t, "http://"+addr+"/readyz"); st != 200 || body != "ready\n" {
		t.Errorf("readyz when started: %d %s", st, body)
	}
	if st, body := httpGet(t, "http://"+addr+"/metrics"); st != 200 || !strings.Contains(body, "minikafka_connections") {
		t.Errorf("metrics: %d %.100s", st, body)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("HTTP listener still open after Close")
	}
}

// TestSlowHTTPClientsDoNotStallKafka: while hostile HTTP clients send
// headers a byte at a time, push huge bodies and ask for big pages they
// never read, a kgo producer and consumer go on at full speed.
func TestSlowHTTPClientsDoNotStallKafka(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithHTTPAddr("127.0.0.1:0"), minikafka.WithTopic("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	httpAddr := b.HTTPAddr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Some data for the console's pages to read.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	big := strings.Repeat("v", 60<<10)
	for i := range 100 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Key: fmt.Appendf(nil, "%d", i), Value: []byte(big)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	var hostile sync.WaitGroup
	var conns []net.Conn
	var connsMu sync.Mutex
	dial := func() net.Conn {
		c, err := net.Dial("tcp", httpAddr)
		if err != nil {
			return nil
		}
		connsMu.Lock()
		conns = append(conns, c)
		connsMu.Unlock()
		return c
	}
	defer func() {
		connsMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connsMu.Unlock()
	}()
	// More slow-loris connections than the server serves at once.
	for range 160 {
		hostile.Add(1)
		go func() {
			defer hostile.Done()
			c := dial()
			if c == nil {
				return
			}
			for _, ch := range []byte("GET /api/topics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") {
				if ctx.Err() != nil {
					return
				}
				if _, err := c.Write([]byte{ch}); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	// attack runs n goroutines that each connect and call f again and
	// again until the test is over.
	attack := func(n int, f func(net.Conn)) {
		for range n {
			hostile.Add(1)
			go func() {
				defer hostile.Done()
				for ctx.Err() == nil {
					c := dial()
					if c == nil {
						return
					}
					f(c)
				}
			}()
		}
	}
	// Huge bodies, sent as fast as the server takes them.
	attack(4, func(c net.Conn) {
		fmt.Fprintf(c, "POST /api/topics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"name\":\"", int64(10)<<30)
		chunk := []byte(strings.Repeat("a", 64<<10))
		for ctx.Err() == nil {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(chunk); err != nil {
				break
			}
		}
		c.Close()
	})
	// Big pages nobody reads.
	attack(8, func(c net.Conn) {
		fmt.Fprintf(c, "GET /api/topics/t/records?partition=0&limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	})

	// Let the attack get going: every slow-loris connection open (on a
	// loaded machine their goroutines may need more than a moment to dial).
	var open int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		connsMu.Lock()
		open = len(conns)
		connsMu.Unlock()
		if open >= 160 || time.Now().After(deadline) {
			break
		}
	}
	if open < 160 {
		t.Errorf("only %d hostile connections after 10 s", open)
	}
	start := time.Now()
	const n = 2000
	var slowest time.Duration
	for i := range n {
		t0 := time.Now()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: fmt.Appendf(nil, "r%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(t0))
	}
	got := 0
	pollCtx, pollCancel := context.WithTimeout(ctx, 20*time.Second)
	defer pollCancel()
	for got < n+100 && pollCtx.Err() == nil {
		got += cl.PollFetches(pollCtx).NumRecords()
	}
	elapsed := time.Since(start)
	t.Logf("%d acks=all produces and %d records consumed in %v under attack; slowest produce %v", n, got, elapsed, slowest)
	if got < n+100 {
		t.Errorf("consumed %d records, want %d", got, n+100)
	}
	if slowest > 2*time.Second || elapsed > 15*time.Second {
		t.Errorf("Kafka stalled: slowest produce %v, all in %v", slowest, elapsed)
	}
	cancel()
	hostile.Wait()
}

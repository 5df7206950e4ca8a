package protocol

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Replies that become ready in reverse order still go out in request
// order, interleaved with immediate ones.
func TestPipeliningOrder(t *testing.T) {
	const n = 20
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		i := req.CorrelationID
		if i%3 == 0 {
			return Reply{}, false // immediate
		}
		resp := defaultResponse(req)
		return Reply{Wait: func() (kmsg.Response, error) {
			// Earlier requests wait longer.
			time.Sleep(time.Duration(n-i) * time.Millisecond)
			return resp, nil
		}}, true
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	var frames [][]byte
	for i := range n {
		frames = append(frames, frame(int32(i), kmsg.StringPtr("c"), metadataReq(4, "t")))
	}
	send(t, c, frames...)
	for i := range n {
		corr, body := mustReadFrame(t, c)
		if corr != int32(i) {
			t.Fatalf("response %d has correlation id %d", i, corr)
		}
		if m := decodeMetadata(t, 4, body); len(m.Topics) != 1 || *m.Topics[0].Topic != "t" {
			t.Fatalf("response %d: bad body %+v", i, m)
		}
	}
}

func TestOversizeFrameCloses(t *testing.T) {
	h := &fakeHandler{}
	s := startServer(t, Config{MaxRequestBytes: 1024}, h)
	other := dial(t, s)

	c := dial(t, s)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], 1025)
	send(t, c, hdr[:]) // just the length: the server must not wait for the body
	expectClosed(t, c)

	c2 := dial(t, s)
	send(t, c2, []byte{0x80, 0, 0, 0}) // negative size
	expectClosed(t, c2)

	// A frame exactly at the cap is fine.
	req := metadataReq(1, "x")
	f := frame(1, nil, req)
	pad := 1024 - (len(f) - 4)
	req.Topics[0].Topic = kmsg.StringPtr(string(bytes.Repeat([]byte("x"), 1+pad)))
	f = frame(1, nil, req)
	if len(f)-4 != 1024 {
		t.Fatalf("test frame is %d bytes", len(f)-4)
	}
	send(t, other, f)
	if corr, _ := mustReadFrame(t, other); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	if len(h.requests()) != 1 {
		t.Fatalf("handler saw %d requests, want 1", len(h.requests()))
	}
}

func TestUnknownKeyClosesOnlyThatConnection(t *testing.T) {
	h := &fakeHandler{}
	s := startServer(t, Config{}, h)
	good := dial(t, s)
	bad := dial(t, s)

	// A valid request pipelined before the bad one is still answered.
	send(t, bad, frame(1, nil, metadataReq(1, "a")), rawFrame(9999, 0, 2, []byte{0, 0}))
	if corr, _ := mustReadFrame(t, bad); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	expectClosed(t, bad)

	send(t, good, frame(5, nil, metadataReq(1, "b")))
	if corr, _ := mustReadFrame(t, good); corr != 5 {
		t.Fatalf("corr %d", corr)
	}
	apiVersionsRoundTrip(t, s)
}

func TestTooNewVersionCloses(t *testing.T) {
	s := startServer(t, Config{}, &fakeHandler{})
	c := dial(t, s)
	send(t, c, rawFrame(3, kmsg.NewPtrMetadataRequest().MaxVersion()+1, 1, []byte{0, 0, 0}))
	expectClosed(t, c)
	apiVersionsRoundTrip(t, s)
}

func TestTruncatedRequest(t *testing.T) {
	h := &fakeHandler{}
	s := startServer(t, Config{}, h)

	t.Run("header", func(t *testing.T) {
		c := dial(t, s)
		send(t, c, []byte{0, 0, 0, 5, 0, 3, 0, 1, 0}) // 5-byte frame
		expectClosed(t, c)
	})
	t.Run("client id", func(t *testing.T) {
		c := dial(t, s)
		send(t, c, rawFrame(3, 1, 1, []byte{0, 10, 'a'})) // id of 10, 1 byte given
		expectClosed(t, c)
	})
	t.Run("body", func(t *testing.T) {
		c := dial(t, s)
		f := frame(1, nil, metadataReq(1, "topic"))
		// Keep the frame length consistent but cut the body.
		cut := f[:len(f)-3]
		binary.BigEndian.PutUint32(cut, uint32(len(cut)-4))
		send(t, c, cut)
		expectClosed(t, c)
	})
	t.Run("flexible header tags", func(t *testing.T) {
		c := dial(t, s)
		// Metadata v9 is flexible: header claims 1 tag of 50 bytes.
		send(t, c, rawFrame(3, 9, 1, []byte{0xff, 0xff, 1, 0, 50, 1, 2}))
		expectClosed(t, c)
	})
	t.Run("frame cut by EOF", func(t *testing.T) {
		c := dial(t, s)
		f := frame(1, nil, metadataReq(1, "topic"))
		send(t, c, f[:len(f)-2])
		c.(*net.TCPConn).CloseWrite()
		expectClosed(t, c)
	})
	if n := len(h.requests()); n != 0 {
		t.Fatalf("handler saw %d requests from truncated frames", n)
	}
	apiVersionsRoundTrip(t, s)
}

// ApiVersions answers always use response header v0, and a version newer
// than kmsg knows still reaches the handler (as an empty request).
func TestApiVersionsHeaderV0(t *testing.T) {
	h := &fakeHandler{}
	s := startServer(t, Config{}, h)
	c := dial(t, s)

	for _, v := range []int16{0, 3, kmsg.NewPtrApiVersionsRequest().MaxVersion()} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "sw", "1.0"
		send(t, c, frame(int32(v), kmsg.StringPtr("cid"), req))
		corr, body := mustReadFrame(t, c)
		if corr != int32(v) {
			t.Fatalf("v%d: corr %d", v, corr)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = v
		// No tagged-field byte before the body: with one, the key
		// array length would be misread.
		if err := resp.ReadFrom(body); err != nil || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 {
			t.Fatalf("v%d: decode err %v, keys %+v", v, err, resp.ApiKeys)
		}
	}
	got := h.requests()
	if av := got[1].Body.(*kmsg.ApiVersionsRequest); av.ClientSoftwareName != "sw" || *got[1].ClientID != "cid" {
		t.Fatalf("v3 request decoded as %+v, client id %v", av, got[1].ClientID)
	}

	// A version from the future: flexible header, body we cannot know.
	// Kafka answers v0 with UNSUPPORTED_VERSION.
	const future = 99
	send(t, c, rawFrame(18, future, 42, []byte{0, 3, 'c', 'i', 'd', 0, 0xde, 0xad, 0xbe, 0xef}))
	corr, body := mustReadFrame(t, c)
	if corr != 42 {
		t.Fatalf("corr %d", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse() // v0
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 35 || len(resp.ApiKeys) != 1 {
		t.Fatalf("future ApiVersions answer: err %v, %+v", err, resp)
	}
	last := h.requests()[len(h.requests())-1]
	if last.Version != future || last.Body.GetVersion() != future || *last.ClientID != "cid" {
		t.Fatalf("handler saw version %d / body version %d / client %v", last.Version, last.Body.GetVersion(), last.ClientID)
	}

	// A decodable version with a body kmsg rejects is treated the same.
	send(t, c, rawFrame(18, 3, 43, []byte{0, 0, 0, 0x7f}))
	corr, _ = mustReadFrame(t, c)
	if corr != 43 {
		t.Fatalf("corr %d", corr)
	}
}

// Flexible requests carry header tagged fields, which are skipped; the
// response gets header v1 (an empty tag section).
func TestFlexibleHeaderTags(t *testing.T) {
	h := &fakeHandler{}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	const v = 12
	req := metadataReq(v, "alpha", "beta")
	send(t, c, frame(9, kmsg.StringPtr("my-client"), req, []byte("tag zero"), []byte{}, bytes.Repeat([]byte{7}, 300)))
	corr, body := mustReadFrame(t, c)
	if corr != 9 {
		t.Fatalf("corr %d", corr)
	}
	m := decodeMetadata(t, v, body)
	if len(m.Topics) != 2 || *m.Topics[1].Topic != "beta" {
		t.Fatalf("topics %+v", m.Topics)
	}
	got := h.requests()[0]
	if got.Key != 3 || got.Version != v || *got.ClientID != "my-client" {
		t.Fatalf("request %+v", got)
	}
	if mr := got.Body.(*kmsg.MetadataRequest); mr.GetVersion() != v || *mr.Topics[0].Topic != "alpha" {
		t.Fatalf("body %+v", mr)
	}

	// Null client id, no tags, non-flexible.
	send(t, c, frame(10, nil, metadataReq(1, "x")))
	if corr, _ := mustReadFrame(t, c); corr != 10 {
		t.Fatalf("corr %d", corr)
	}
	if got := h.requests()[1]; got.ClientID != nil {
		t.Fatalf("client id %q, want null", *got.ClientID)
	}
}

func TestIdleTimeout(t *testing.T) {
	release := make(chan struct{})
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		if req.CorrelationID != 1 {
			return Reply{}, false
		}
		resp := defaultResponse(req)
		return Reply{Wait: func() (kmsg.Response, error) {
			<-release
			return resp, nil
		}}, true
	}}
	// Generous margins: the test runs under -race on a loaded 2-core CI
	// machine, where a round trip can take a good part of a second.
	const idle = time.Second
	s := startServer(t, Config{IdleTimeout: idle}, h)

	start := time.Now() // before the dial, so the server's timer starts after it
	quiet := dial(t, s)
	busy := dial(t, s)
	send(t, busy, frame(1, nil, metadataReq(1)))
	expectClosed(t, quiet)
	if d := time.Since(start); d < idle*9/10 || d > 10*time.Second {
		t.Fatalf("idle connection closed after %v", d)
	}
	// A long poll in flight keeps its connection open past the timeout.
	time.Sleep(2 * idle)
	close(release)
	if corr, _ := mustReadFrame(t, busy); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	// Activity keeps it open: a request every idle/4, for longer than
	// the timeout in total.
	for i := range 6 {
		time.Sleep(idle / 4)
		send(t, busy, frame(int32(10+i), nil, metadataReq(1)))
		if corr, _ := mustReadFrame(t, busy); corr != int32(10+i) {
			t.Fatalf("corr %d", corr)
		}
	}
	expectClosed(t, busy)
}

func TestGracefulShutdownFinishesInFlightWait(t *testing.T) {
	release := make(chan struct{})
	served := make(chan struct{}, 1)
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		resp := defaultResponse(req)
		served <- struct{}{}
		return Reply{Wait: func() (kmsg.Response, error) {
			<-release
			return resp, nil
		}}, true
	}}
	s, err := Listen(Config{Addr: "127.0.0.1:0"}, h)
	if err != nil {
		t.Fatal(err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.Serve() }()
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1, "t")))
	<-served

	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned before the in-flight reply: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	// No new connections.
	if nc, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		nc.Close()
		t.Fatal("dial succeeded after Close began")
	}
	close(release)
	if corr, _ := mustReadFrame(t, c); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	expectClosed(t, c)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-serveErr; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseForcedByContext(t *testing.T) {
	waiting := make(chan struct{}, 1)
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		return Reply{Wait: func() (kmsg.Response, error) {
			waiting <- struct{}{}
			<-ctx.Done() // a long poll that only ends when cancelled
			return nil, ctx.Err()
		}}, true
	}}
	s, err := Listen(Config{Addr: "127.0.0.1:0"}, h)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1)))
	// The poll must be in flight before Close, or Close has nothing to wait
	// for; a fixed sleep was not always long enough on a loaded machine.
	<-waiting
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want deadline exceeded", err)
	}
	expectClosed(t, c)
}

func TestAcksZeroAndReplyErr(t *testing.T) {
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		switch req.CorrelationID {
		case 1:
			return Reply{}, true // no response
		case 3:
			return Reply{Err: errors.New("boom")}, true
		}
		return Reply{}, false
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1)), frame(2, nil, metadataReq(1)), frame(3, nil, metadataReq(1)))
	if corr, _ := mustReadFrame(t, c); corr != 2 {
		t.Fatalf("first response has corr %d, want 2", corr)
	}
	expectClosed(t, c)
	apiVersionsRoundTrip(t, s)
}

// The reader stops reading once MaxInFlight replies are queued.
func TestBoundedInFlight(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int32
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		served.Add(1)
		resp := defaultResponse(req)
		return Reply{Wait: func() (kmsg.Response, error) {
			<-release
			return resp, nil
		}}, true
	}}
	const max = 2
	s := startServer(t, Config{MaxInFlight: max}, h)
	c := dial(t, s)
	const n = 10
	for i := range n {
		send(t, c, frame(int32(i), nil, metadataReq(1)))
	}
	time.Sleep(100 * time.Millisecond)
	// One in the writer's Wait, max queued, one in the reader's enqueue.
	if got := served.Load(); got > max+2 {
		t.Fatalf("%d requests served with MaxInFlight %d", got, max)
	}
	close(release)
	for i := range n {
		if corr, _ := mustReadFrame(t, c); corr != int32(i) {
			t.Fatalf("corr %d want %d", corr, i)
		}
	}
}

// bodyWriterResponse stands in for a fetch response that writes file
// ranges itself.
type bodyWriterResponse struct {
	*kmsg.MetadataResponse
	body     []byte
	released *atomic.Int32
}

func (r *bodyWriterResponse) BodyLen() int64 { return int64(len(r.body)) }
func (r *bodyWriterResponse) WriteBody(w io.Writer, head []byte) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	// Go through ReaderFrom, as a sendfile path would.
	_, err := io.Copy(w, bytes.NewReader(r.body))
	return err
}
func (r *bodyWriterResponse) Release() { r.released.Add(1) }

func TestBodyWriter(t *testing.T) {
	var released atomic.Int32
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		if req.CorrelationID != 2 {
			return Reply{}, false
		}
		m := defaultResponse(req).(*kmsg.MetadataResponse)
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = kmsg.StringPtr("streamed")
		m.Topics = append(m.Topics, rt)
		return Reply{Response: &bodyWriterResponse{m, m.AppendTo(nil), &released}}, true
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	const v = 12 // flexible: the header's tag byte goes in head
	send(t, c, frame(1, nil, metadataReq(v)), frame(2, nil, metadataReq(v)), frame(3, nil, metadataReq(v)))
	for i := int32(1); i <= 3; i++ {
		corr, body := mustReadFrame(t, c)
		if corr != i {
			t.Fatalf("corr %d want %d", corr, i)
		}
		m := decodeMetadata(t, v, body)
		if i == 2 && (len(m.Topics) != 1 || *m.Topics[0].Topic != "streamed") {
			t.Fatalf("streamed body decoded as %+v", m.Topics)
		}
	}
	if released.Load() != 1 {
		t.Fatalf("Release called %d times", released.Load())
	}
}

func TestListenIPv6AndPortZero(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback on this machine: %v", err)
	}
	ln.Close()
	s := startServer(t, Config{Addr: "[::1]:0"}, &fakeHandler{})
	if a := s.Addr().(*net.TCPAddr); a.Port == 0 || a.IP.To4() != nil {
		t.Fatalf("bound %v", a)
	}
	apiVersionsRoundTrip(t, s)
}

func TestListenBusyPort(t *testing.T) {
	s := startServer(t, Config{}, &fakeHandler{})
	if _, err := Listen(Config{Addr: s.Addr().String()}, &fakeHandler{}); err == nil {
		t.Fatal("second Listen on a busy port succeeded")
	}
}

func TestDrainingSignalsLongPolls(t *testing.T) {
	waiting := make(chan struct{}, 1)
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		resp := defaultResponse(req)
		return Reply{Wait: func() (kmsg.Response, error) {
			waiting <- struct{}{}
			select {
			case <-req.Conn.Draining():
				return resp, nil
			case <-time.After(time.Minute):
				return nil, errors.New("long poll not woken by shutdown")
			}
		}}, true
	}}
	s, err := Listen(Config{Addr: "127.0.0.1:0"}, h)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1)))
	// The poll must be waiting before Close, else there is no long poll to
	// wake; a fixed sleep was not always long enough on a loaded machine.
	<-waiting
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if corr, _ := mustReadFrame(t, c); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	// The poll's own end is a minute away; 10 s leaves room for a loaded
	// -race run.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	if (&ConnInfo{}).Draining() != nil {
		t.Fatal("Draining of a ConnInfo without a server is not nil")
	}
}

// A client that sends a long poll and then closes its side gets the
// answer at once: the connection context is cancelled on EOF.
func TestClientEOFCancelsLongPoll(t *testing.T) {
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		resp := defaultResponse(req)
		return Reply{Wait: func() (kmsg.Response, error) {
			select {
			case <-ctx.Done():
				return resp, nil
			case <-time.After(time.Minute):
				return nil, errors.New("long poll not cancelled by EOF")
			}
		}}, true
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1)))
	start := time.Now()
	c.(*net.TCPConn).CloseWrite()
	if corr, _ := mustReadFrame(t, c); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	// The poll's own end is a minute away; 10 s leaves room for a loaded
	// -race run.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("answer took %v", d)
	}
	expectClosed(t, c)
}

// Close right after Listen, racing with Serve starting, neither hangs
// nor trips the WaitGroup.
func TestCloseRacingServe(t *testing.T) {
	for range 50 {
		s, err := Listen(Config{Addr: "127.0.0.1:0"}, &fakeHandler{})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve() }()
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-served; err != nil {
			t.Fatalf("Serve after Close: %v", err)
		}
	}
}

// At debug level every request is traced, with its client id.
func TestDebugTrace(t *testing.T) {
	var buf syncBuf
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startServer(t, Config{Logger: log}, &fakeHandler{})
	c := dial(t, s)
	send(t, c, frame(7, kmsg.StringPtr("tracer"), metadataReq(4, "t")))
	mustReadFrame(t, c)
	if out := buf.String(); !strings.Contains(out, "key=3 version=4 correlation_id=7 client_id=tracer") {
		t.Fatalf("trace: %s", out)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

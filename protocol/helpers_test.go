package protocol

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeHandler answers every request with an empty response of the right
// kind and version (Metadata echoes its topic names, ApiVersions lists the
// kmsg ranges); hook, when set, may override the reply.
type fakeHandler struct {
	mu   sync.Mutex
	reqs []*Request
	hook func(ctx context.Context, req *Request) (Reply, bool)
}

func (h *fakeHandler) Serve(ctx context.Context, req *Request) Reply {
	h.mu.Lock()
	h.reqs = append(h.reqs, req)
	hook := h.hook
	h.mu.Unlock()
	if hook != nil {
		if r, ok := hook(ctx, req); ok {
			return r
		}
	}
	return Reply{Response: defaultResponse(req)}
}

func (h *fakeHandler) requests() []*Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Request(nil), h.reqs...)
}

func defaultResponse(req *Request) kmsg.Response {
	if av, ok := req.Body.(*kmsg.ApiVersionsRequest); ok {
		resp := kmsg.NewPtrApiVersionsResponse()
		if req.Version > av.MaxVersion() {
			// Kafka's answer to a too-new ApiVersions (KIP-511).
			resp.Version = 0
			resp.ErrorCode = 35 // UNSUPPORTED_VERSION
		} else {
			resp.Version = req.Version
		}
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = 18, 0, av.MaxVersion()
		resp.ApiKeys = append(resp.ApiKeys, k)
		return resp
	}
	resp := req.Body.ResponseKind()
	resp.SetVersion(req.Version)
	if mr, ok := req.Body.(*kmsg.MetadataRequest); ok {
		out := resp.(*kmsg.MetadataResponse)
		for _, t := range mr.Topics {
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic = t.Topic
			out.Topics = append(out.Topics, rt)
		}
	}
	return resp
}

func startServer(t testing.TB, cfg Config, h Handler) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s, err := Listen(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func dial(t testing.TB, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// frame encodes a request frame the way a client does: header v1 or v2
// by the request's flexibility, then the body. tags are extra header
// tagged fields (flexible requests only).
func frame(corr int32, clientID *string, req kmsg.Request, tags ...[]byte) []byte {
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if clientID == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(*clientID)))
		b = append(b, *clientID...)
	}
	if req.IsFlexible() {
		b = binary.AppendUvarint(b, uint64(len(tags)))
		for i, tag := range tags {
			b = binary.AppendUvarint(b, uint64(i))
			b = binary.AppendUvarint(b, uint64(len(tag)))
			b = append(b, tag...)
		}
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// rawFrame builds a frame from raw header fields and body bytes.
func rawFrame(key, version int16, corr int32, rest []byte) []byte {
	b := make([]byte, 4, 16+len(rest))
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, rest...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func send(t testing.TB, c net.Conn, frames ...[]byte) {
	t.Helper()
	var all []byte
	for _, f := range frames {
		all = append(all, f...)
	}
	if _, err := c.Write(all); err != nil {
		t.Fatal(err)
	}
}

// readFrame reads one response frame: correlation id and the rest.
func readFrame(c net.Conn) (int32, []byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		return 0, nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(c, b); err != nil {
		return 0, nil, err
	}
	if len(b) < 4 {
		return 0, nil, errors.New("short response frame")
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}

func mustReadFrame(t testing.TB, c net.Conn) (int32, []byte) {
	t.Helper()
	corr, b, err := readFrame(c)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return corr, b
}

// expectClosed checks that the server closes c (EOF or reset) without
// sending anything more.
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	n, err := c.Read(b[:])
	if err == nil || n > 0 {
		t.Fatalf("expected the connection closed, read %d bytes, err %v", n, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("connection still open after 5s")
	}
}

// apiVersionsRoundTrip checks that a fresh connection gets an ApiVersions
// v3 answer (header v0).
func apiVersionsRoundTrip(t testing.TB, s *Server) {
	t.Helper()
	c := dial(t, s)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	send(t, c, frame(77, nil, req))
	corr, body := mustReadFrame(t, c)
	if corr != 77 {
		t.Fatalf("correlation id %d, want 77", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decoding ApiVersions response: %v", err)
	}
	if len(resp.ApiKeys) == 0 {
		t.Fatal("ApiVersions response without keys")
	}
	c.Close()
}

func metadataReq(version int16, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = version
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func decodeMetadata(t testing.TB, version int16, body []byte) *kmsg.MetadataResponse {
	t.Helper()
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = version
	if resp.IsFlexible() {
		// Response header v1: an empty tagged-field section.
		if len(body) == 0 || body[0] != 0 {
			t.Fatalf("flexible response header without empty tags: % x", body[:min(len(body), 8)])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decoding Metadata v%d response: %v", version, err)
	}
	return resp
}

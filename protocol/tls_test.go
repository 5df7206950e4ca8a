package protocol

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/testcert"
)

func certs(t testing.TB) *testcert.Set {
	t.Helper()
	s, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dialTLS(t testing.TB, s *Server, cfg *tls.Config) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", s.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// fileResponse streams a file as its whole body through BodyWriter, the
// way the broker's fetch sends segment bytes. It fails if the connection it
// is handed could be given to sendfile(2): over TLS that would send
// plaintext past the encryption.
type fileResponse struct {
	*kmsg.MetadataResponse
	f *os.File
	n int64
}

func (r *fileResponse) BodyLen() int64 { return r.n }
func (r *fileResponse) WriteBody(w io.Writer, head []byte) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	if _, ok := w.(syscall.Conn); ok {
		return errors.New("BodyWriter over TLS got a raw descriptor")
	}
	_, err := io.Copy(w, io.NewSectionReader(r.f, 0, r.n))
	return err
}

// Over TLS a request is served as over TCP, the handler sees the TLS
// state, and a BodyWriter (which must not be able to sendfile(2) plaintext
// past the TLS layer) delivers exactly the file's bytes.
func TestTLSServesAndSendsFiles(t *testing.T) {
	cs := certs(t)
	data := make([]byte, 3<<20+17)
	rand.NewChaCha8([32]byte{7}).Read(data)
	path := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	sawTLS := make(chan bool, 4)
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		sawTLS <- req.Conn.TLS != nil && req.Conn.TLS.HandshakeComplete
		if req.CorrelationID != 2 {
			return Reply{}, false
		}
		m := defaultResponse(req).(*kmsg.MetadataResponse)
		return Reply{Response: &fileResponse{m, f, int64(len(data))}}, true
	}}
	s := startServer(t, Config{TLS: cs.ServerConfig(false)}, h)
	c := dialTLS(t, s, cs.ClientConfig(false))
	send(t, c, frame(1, nil, metadataReq(1)), frame(2, nil, metadataReq(1)), frame(3, nil, metadataReq(1)))
	for i := int32(1); i <= 3; i++ {
		corr, body := mustReadFrame(t, c)
		if corr != i {
			t.Fatalf("corr %d want %d", corr, i)
		}
		if i == 2 && !bytes.Equal(body, data) {
			t.Fatalf("file body over TLS: %d bytes, want %d identical", len(body), len(data))
		}
		if !<-sawTLS {
			t.Fatal("handler saw no TLS state")
		}
	}
}

// Mutual TLS: a client without a certificate is refused in the handshake
// (and logged), one with a certificate is served.
func TestMutualTLSRequiresClientCert(t *testing.T) {
	cs := certs(t)
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s := startServer(t, Config{TLS: cs.ServerConfig(true), Logger: log}, &fakeHandler{})

	// TLS 1.3 clients finish their side first; the refusal arrives as an
	// alert on the first read.
	c, err := tls.Dial("tcp", s.Addr().String(), cs.ClientConfig(false))
	if err == nil {
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write(frame(1, nil, metadataReq(1)))
		if _, _, err = readFrame(c); err == nil {
			t.Fatal("client without certificate was served")
		}
	}
	if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client error %v; want a certificate alert", err)
	}
	waitFor(t, func() bool { return strings.Contains(logs.String(), "TLS handshake failed") })

	ok := dialTLS(t, s, cs.ClientConfig(true))
	send(t, ok, frame(5, nil, metadataReq(1)))
	if corr, _ := mustReadFrame(t, ok); corr != 5 {
		t.Fatalf("corr %d", corr)
	}
}

// A plaintext Kafka client on a TLS listener is dropped with a warning
// that says so; the listener keeps serving.
func TestPlaintextClientOnTLSListener(t *testing.T) {
	cs := certs(t)
	var logs syncBuf
	s := startServer(t, Config{TLS: cs.ServerConfig(false), Logger: slog.New(slog.NewTextHandler(&logs, nil))}, &fakeHandler{})
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1)))
	// The server may answer with a TLS alert before closing.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("plaintext client: %v", err)
	}
	waitFor(t, func() bool { return strings.Contains(logs.String(), "TLS handshake failed") })
	ok := dialTLS(t, s, cs.ClientConfig(false))
	send(t, ok, frame(2, nil, metadataReq(1)))
	mustReadFrame(t, ok)
}

// After a reply with SASLRaw the next frame reaches the handler as a bare
// token, and the answer goes out as a bare token; then framing resumes.
func TestRawSASLTokens(t *testing.T) {
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		switch {
		case req.Raw:
			tok := req.Body.(*kmsg.SASLAuthenticateRequest).SASLAuthBytes
			resp := kmsg.NewPtrSASLAuthenticateResponse()
			resp.SASLAuthBytes = append([]byte("echo:"), tok...)
			// One more raw token after "first".
			return Reply{Response: resp, SASLRaw: string(tok) == "first"}, true
		case req.Key == 17:
			resp := kmsg.NewPtrSASLHandshakeResponse()
			return Reply{Response: resp, SASLRaw: true}, true
		}
		return Reply{}, false
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = "PLAIN"
	rawTok := func(tok string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...)
	}
	send(t, c, frame(1, nil, hs), rawTok("first"), rawTok("second"), frame(9, nil, metadataReq(1)))
	if corr, _ := mustReadFrame(t, c); corr != 1 {
		t.Fatalf("handshake corr %d", corr)
	}
	for _, want := range []string{"echo:first", "echo:second"} {
		var sz [4]byte
		if _, err := io.ReadFull(c, sz[:]); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, binary.BigEndian.Uint32(sz[:]))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("raw token %q, want %q", got, want)
		}
	}
	if corr, _ := mustReadFrame(t, c); corr != 9 {
		t.Fatalf("framing did not resume: corr %d", corr)
	}
	reqs := h.requests()
	if len(reqs) != 4 || !reqs[1].Raw || !reqs[2].Raw || reqs[3].Raw || reqs[1].Key != 36 {
		t.Fatalf("requests seen: %d", len(reqs))
	}
}

// PreAuthMaxRequestBytes caps frames until SetAuthenticated, on that
// connection only.
func TestPreAuthFrameCap(t *testing.T) {
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		if req.Key == 17 {
			req.Conn.SetAuthenticated()
			return Reply{Response: kmsg.NewPtrSASLHandshakeResponse()}, true
		}
		return Reply{}, false
	}}
	s := startServer(t, Config{PreAuthMaxRequestBytes: 1024}, h)
	big := metadataReq(1, strings.Repeat("t", 2000))

	c := dial(t, s)
	send(t, c, frame(1, nil, big))
	expectClosed(t, c)

	c2 := dial(t, s)
	send(t, c2, frame(1, nil, kmsg.NewPtrSASLHandshakeRequest()), frame(2, nil, big))
	mustReadFrame(t, c2)
	if corr, body := mustReadFrame(t, c2); corr != 2 || len(decodeMetadata(t, 1, body).Topics) != 1 {
		t.Fatalf("large request after authentication: corr %d", corr)
	}
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A Reply with both Response and Err writes the response, then closes (a
// failed SASL exchange's answer); requests pipelined after it are not
// served.
func TestReplyErrWithResponse(t *testing.T) {
	h := &fakeHandler{hook: func(ctx context.Context, req *Request) (Reply, bool) {
		if req.CorrelationID == 2 {
			return Reply{Response: defaultResponse(req), Err: errors.New("last answer")}, true
		}
		return Reply{}, false
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	send(t, c, frame(1, nil, metadataReq(1)), frame(2, nil, metadataReq(1)), frame(3, nil, metadataReq(1)))
	for i := int32(1); i <= 2; i++ {
		if corr, _ := mustReadFrame(t, c); corr != i {
			t.Fatalf("corr %d want %d", corr, i)
		}
	}
	expectClosed(t, c)
	if n := len(h.requests()); n != 2 {
		t.Fatalf("%d requests served, want 2", n)
	}
}

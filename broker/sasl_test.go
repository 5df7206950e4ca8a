package broker

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka/internal/testcert"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

const saslTestPass = "s3cret-Pa55"

var saslTestUsers = map[string]string{"alice": saslTestPass, "bob,=odd": "another"}

// lockedBuf collects log output from several goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// secureBroker serves a broker with SASL (when sc is set) and TLS (when
// tc is set) on a real port; logs go to the returned buffer.
func secureBroker(t testing.TB, sc *SASLConfig, tc *tls.Config, mod ...func(*Config)) (*Broker, string, *lockedBuf) {
	t.Helper()
	logs := &lockedBuf{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := newTestBroker(t, append([]func(*Config){func(c *Config) {
		c.SASL, c.Logger, c.AutoCreateTopics = sc, log, true
	}}, mod...)...)
	pc := protocol.Config{Addr: "127.0.0.1:0", TLS: tc, Logger: log}
	if sc != nil {
		pc.PreAuthMaxRequestBytes = PreAuthMaxRequestBytes
	}
	return b, listenWith(t, b, pc), logs
}

func mechanism(name, user, pass string) sasl.Mechanism {
	switch name {
	case SASLPlain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case SASLScramSHA256:
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	}
	return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
}

func mustCerts(t testing.TB) *testcert.Set {
	t.Helper()
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// roundTrip produces n records to topic and consumes them back.
func roundTrip(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) {
	t.Helper()
	cl := newClient(t, addr, append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation()}, opts...)...)
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("value-%d", i))})
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	got := consumeN(t, addr, topic, n, opts...)
	for i, r := range got[:n] {
		if string(r.Value) != fmt.Sprintf("value-%d", i) {
			t.Fatalf("record %d: %q", i, r.Value)
		}
	}
}

// kgo authenticates with each mechanism over SASL_PLAINTEXT and
// SASL_SSL, with SaslHandshake v1 (SaslAuthenticate requests) and v0
// (bare tokens), and then produces and consumes.
func TestSASLKgo(t *testing.T) {
	cs := mustCerts(t)
	_, plainAddr, logs := secureBroker(t, &SASLConfig{Users: saslTestUsers}, nil)
	_, tlsAddr, _ := secureBroker(t, &SASLConfig{Users: saslTestUsers}, cs.ServerConfig(false))
	v0 := kversion.Stable()
	v0.SetMaxKeyVersion(17, 0)
	for _, mech := range SASLMechanisms {
		for _, tr := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
			for _, hs := range []string{"v1", "v0"} {
				t.Run(mech+"/"+tr+"/"+hs, func(t *testing.T) {
					addr, opts := plainAddr, []kgo.Opt{kgo.SASL(mechanism(mech, "alice", saslTestPass))}
					if tr == "SASL_SSL" {
						addr, opts = tlsAddr, append(opts, kgo.DialTLSConfig(cs.ClientConfig(false)))
					}
					if hs == "v0" {
						opts = append(opts, kgo.MaxVersions(v0))
					}
					roundTrip(t, addr, strings.NewReplacer("-", "", "/", "-").Replace("sasl-"+mech+"/"+tr+"/"+hs), 20, opts...)
				})
			}
		}
	}
	// A user name with SCRAM's escaped characters.
	roundTrip(t, plainAddr, "sasl-odd-user", 3, kgo.SASL(mechanism(SASLScramSHA256, "bob,=odd", "another")))
	if strings.Contains(logs.String(), saslTestPass) {
		t.Fatal("a password reached the log")
	}
}

// A wrong password fails with SASL_AUTHENTICATION_FAILED and Kafka's
// message, is logged once without the password, and the broker serves the
// next client.
func TestSASLWrongPassword(t *testing.T) {
	_, addr, logs := secureBroker(t, &SASLConfig{Users: saslTestUsers}, nil)
	for _, mech := range SASLMechanisms {
		t.Run(mech, func(t *testing.T) {
			for _, user := range []string{"alice", "mallory"} {
				cl := newClient(t, addr, kgo.SASL(mechanism(mech, user, "wrong-guess")))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := cl.Ping(ctx)
				cancel()
				if !errors.Is(err, kerr.SaslAuthenticationFailed) {
					t.Fatalf("%s: ping with a wrong password: %v", user, err)
				}
				if !strings.Contains(err.Error(), "Authentication failed") {
					t.Fatalf("%s: no Kafka error message in %v", user, err)
				}
			}
			roundTrip(t, addr, "after-wrong-"+strings.ToLower(mech), 2, kgo.SASL(mechanism(mech, "alice", saslTestPass)))
		})
	}
	out := logs.String()
	// Failures are rate-limited (a first line, then a count per
	// interval), so which user the written line names depends on timing.
	if !strings.Contains(out, "SASL authentication failed") ||
		!strings.Contains(out, "user=mallory") && !strings.Contains(out, "user=alice") {
		t.Fatalf("failures not logged:\n%s", out)
	}
	if strings.Contains(out, "wrong-guess") || strings.Contains(out, saslTestPass) {
		t.Fatal("a password reached the log")
	}
}

// wire is a bare client connection speaking frames.
type wire struct {
	t    testing.TB
	c    net.Conn
	corr int32
}

func dialWire(t testing.TB, addr string) *wire {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &wire{t: t, c: c}
}

func (w *wire) send(req kmsg.Request) {
	w.t.Helper()
	if err := w.sendMayFail(req); err != nil {
		w.t.Fatal(err)
	}
}

// sendMayFail writes req's frame and returns the write error.
func (w *wire) sendMayFail(req kmsg.Request) error {
	w.corr++
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(w.corr))
	b = binary.BigEndian.AppendUint16(b, 0xffff) // null client id
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.c.Write(b)
	return err
}

func (w *wire) frame() ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(w.c, sz[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(sz[:]))
	_, err := io.ReadFull(w.c, b)
	return b, err
}

// roundTrip sends req and decodes its response.
func (w *wire) roundTrip(req kmsg.Request) kmsg.Response {
	w.t.Helper()
	w.send(req)
	b, err := w.frame()
	if err != nil {
		w.t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	b = b[4:]
	if resp.IsFlexible() && req.Key() != 18 {
		b = b[1:]
	}
	if err := resp.ReadFrom(b); err != nil {
		w.t.Fatal(err)
	}
	return resp
}

func (w *wire) expectClosed() {
	w.t.Helper()
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(w.c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || len(b) > 0 {
		w.t.Fatalf("connection still open (read %d bytes, %v)", len(b), err)
	}
}

func handshake(version int16, mech string) *kmsg.SASLHandshakeRequest {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Version, r.Mechanism = version, mech
	return r
}

func authenticate(version int16, token string) *kmsg.SASLAuthenticateRequest {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version, r.SASLAuthBytes = version, []byte(token)
	return r
}

func metadata() *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 9
	return r
}

// Before authentication only ApiVersions (once) and SaslHandshake are
// allowed; anything else closes that connection only.
func TestSASLRequestBeforeAuthentication(t *testing.T) {
	_, addr, logs := secureBroker(t, &SASLConfig{Users: saslTestUsers}, nil)
	// An authenticated client that keeps working throughout.
	cl := newClient(t, addr, kgo.SASL(mechanism(SASLScramSHA512, "alice", saslTestPass)), kgo.DefaultProduceTopic("steady"), kgo.AllowAutoTopicCreation())
	produce := func() {
		t.Helper()
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("authenticated client: %v", err)
		}
	}
	produce()

	w := dialWire(t, addr)
	w.send(metadata())
	w.expectClosed()
	produce()

	w = dialWire(t, addr)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "test", "1"
	if r := w.roundTrip(av).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 || len(r.ApiKeys) == 0 {
		t.Fatalf("ApiVersions before auth: %+v", r)
	}
	w.send(av) // a second one, as Kafka, is refused
	w.expectClosed()

	// After a v1 handshake, only SaslAuthenticate: anything else is
	// answered ILLEGAL_SASL_STATE and closed (TestSASLIllegalState has
	// every phase).
	w = dialWire(t, addr)
	if r := w.roundTrip(handshake(1, SASLPlain)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("handshake: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	w.roundTrip(metadata())
	w.expectClosed()

	// A frame over Kafka's sasl.server.max.receive.size before auth. The
	// broker closes on reading the size, so the rest of the write may meet
	// a closed connection (broken pipe, reset): only the close matters.
	w = dialWire(t, addr)
	w.sendMayFail(authenticate(1, strings.Repeat("x", PreAuthMaxRequestBytes)))
	w.expectClosed()

	produce()
	if !strings.Contains(logs.String(), "request before SASL authentication") {
		t.Fatal("early request not logged")
	}
}

// The handshake and authentication answers Kafka gives on the wire.
func TestSASLWireAnswers(t *testing.T) {
	_, addr, _ := secureBroker(t, &SASLConfig{Users: saslTestUsers, Mechanisms: []string{"SCRAM-SHA-256", "PLAIN"}}, nil)

	// Unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the list, closed.
	w := dialWire(t, addr)
	r := w.roundTrip(handshake(1, "GSSAPI")).(*kmsg.SASLHandshakeResponse)
	if r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(r.SupportedMechanisms, ",") != "SCRAM-SHA-256,PLAIN" {
		t.Fatalf("unknown mechanism: code %d, %v", r.ErrorCode, r.SupportedMechanisms)
	}
	w.expectClosed()
	// SCRAM-SHA-512 is not enabled here.
	w = dialWire(t, addr)
	if r := w.roundTrip(handshake(1, SASLScramSHA512)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
		t.Fatalf("disabled mechanism: code %d", r.ErrorCode)
	}
	w.expectClosed()

	// PLAIN by hand with v2 (flexible); then SASL requests are
	// ILLEGAL_SASL_STATE and others are served.
	w = dialWire(t, addr)
	w.roundTrip(handshake(1, SASLPlain))
	a := w.roundTrip(authenticate(2, "\x00alice\x00"+saslTestPass)).(*kmsg.SASLAuthenticateResponse)
	if a.ErrorCode != 0 || a.SessionLifetimeMillis != 0 || len(a.SASLAuthBytes) != 0 {
		t.Fatalf("PLAIN: code %d lifetime %d", a.ErrorCode, a.SessionLifetimeMillis)
	}
	if r := w.roundTrip(handshake(1, SASLPlain)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("handshake after auth: code %d", r.ErrorCode)
	}
	if r := w.roundTrip(authenticate(1, "x")).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("authenticate after auth: code %d", r.ErrorCode)
	}
	if r := w.roundTrip(metadata()).(*kmsg.MetadataResponse); r.ClusterID == nil {
		t.Fatal("metadata after auth")
	}
	// A large request is fine once authenticated.
	big := metadata()
	big.Topics = append(big.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(strings.Repeat("t", 200)), TopicID: [16]byte{1}})
	for range 3000 {
		big.Topics = append(big.Topics, big.Topics[0])
	}
	w.roundTrip(big)

	for _, tc := range []struct{ token, msg string }{
		{"\x00alice\x00nope", "Authentication failed: Invalid username or password"},
		{"\x00\x00x", "Authentication failed: username not specified"},
		{"\x00alice\x00", "Authentication failed: password not specified"},
		{"bob\x00alice\x00" + saslTestPass, "Authentication failed: Client requested an authorization id that is different from username"},
		{"no separators", "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN"},
	} {
		w = dialWire(t, addr)
		w.roundTrip(handshake(1, SASLPlain))
		a := w.roundTrip(authenticate(1, tc.token)).(*kmsg.SASLAuthenticateResponse)
		if a.ErrorCode != kerr.SaslAuthenticationFailed.Code || a.ErrorMessage == nil || *a.ErrorMessage != tc.msg {
			t.Fatalf("token %q: code %d, message %v", tc.token, a.ErrorCode, deref(a.ErrorMessage))
		}
		w.expectClosed()
	}

	// v0 handshake, then a raw PLAIN token: Kafka answers an empty token.
	w = dialWire(t, addr)
	w.roundTrip(handshake(0, SASLPlain))
	tok := "\x00alice\x00" + saslTestPass
	w.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	if b, err := w.frame(); err != nil || len(b) != 0 {
		t.Fatalf("raw PLAIN answer: %q, %v", b, err)
	}
	w.roundTrip(metadata())
	// A raw wrong password: closed, no answer.
	w = dialWire(t, addr)
	w.roundTrip(handshake(0, SASLPlain))
	tok = "\x00alice\x00wrong"
	w.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	w.expectClosed()
}

// Without SASL, SaslHandshake and SaslAuthenticate get ILLEGAL_SASL_STATE
// as on Kafka's plaintext listener, and nothing else changes.
func TestSASLOff(t *testing.T) {
	_, addr, _ := secureBroker(t, nil, nil)
	w := dialWire(t, addr)
	if r := w.roundTrip(handshake(1, SASLPlain)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("handshake: code %d", r.ErrorCode)
	}
	if r := w.roundTrip(authenticate(0, "x")).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("authenticate: code %d", r.ErrorCode)
	}
	w.roundTrip(metadata())
	// kgo configured for SASL against it fails cleanly.
	cl := newClient(t, addr, kgo.SASL(mechanism(SASLPlain, "alice", saslTestPass)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); !errors.Is(err, kerr.IllegalSaslState) {
		t.Fatalf("SASL client on a plaintext listener: %v", err)
	}
}

func TestSASLConfigErrors(t *testing.T) {
	for _, c := range []SASLConfig{
		{},
		{Users: map[string]string{"": "x"}},
		{Users: saslTestUsers, Mechanisms: []string{"GSSAPI"}},
		{Users: saslTestUsers, Iterations: 1000},
	} {
		if _, err := New(Config{DataDir: "/d", FS: vfs.NewMem(), SASL: &c}); err == nil {
			t.Fatalf("config %+v accepted", c)
		}
	}
}

// Over TLS a fetch must not use sendfile (it would bypass encryption):
// the records arrive intact from real segment files, and the sendfile
// counter does not move.
func TestTLSFetchCopiesFileBytes(t *testing.T) {
	cs := mustCerts(t)
	dir := t.TempDir()
	_, addr, _ := secureBroker(t, nil, cs.ServerConfig(false), func(c *Config) { c.FS, c.DataDir = vfs.Default, dir })
	opts := []kgo.Opt{kgo.DialTLSConfig(cs.ClientConfig(false))}
	cl := newClient(t, addr, append(opts, kgo.DefaultProduceTopic("tls-fetch"), kgo.AllowAutoTopicCreation(), kgo.ProducerBatchMaxBytes(1<<20))...)
	const n = 400
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 8<<10+i) }
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Value: val(i)})
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	before := sendfileRanges.Load()
	got := consumeN(t, addr, "tls-fetch", n, opts...)
	for i, r := range got[:n] {
		if !bytes.Equal(r.Value, val(i)) {
			t.Fatalf("record %d differs (%d bytes)", i, len(r.Value))
		}
	}
	if d := sendfileRanges.Load() - before; d != 0 {
		t.Fatalf("%d ranges went out with sendfile over TLS", d)
	}
}

// buildClientFinal computes a client-final message for nonce as a client
// knowing pass would (RFC 5802), from the server-first message.
func buildClientFinal(t *testing.T, mech, pass, clientFirstBare, serverFirst, nonce string) string {
	t.Helper()
	h := map[string]func() hash.Hash{SASLScramSHA256: sha256.New, SASLScramSHA512: sha512.New}[mech]
	mac := func(key, msg []byte) []byte {
		m := hmac.New(h, key)
		m.Write(msg)
		return m.Sum(nil)
	}
	var salt []byte
	var iters int
	for _, a := range strings.Split(serverFirst, ",") {
		switch {
		case strings.HasPrefix(a, "s="):
			salt, _ = base64.StdEncoding.DecodeString(a[2:])
		case strings.HasPrefix(a, "i="):
			iters, _ = strconv.Atoi(a[2:])
		}
	}
	salted, err := pbkdf2.Key(h, pass, salt, iters, h().Size())
	if err != nil {
		t.Fatal(err)
	}
	clientKey := mac(salted, []byte("Client Key"))
	hh := h()
	hh.Write(clientKey)
	withoutProof := "c=biws,r=" + nonce
	sig := mac(hh.Sum(nil), []byte(clientFirstBare+","+serverFirst+","+withoutProof))
	proof := make([]byte, len(sig))
	subtle.XORBytes(proof, clientKey, sig)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)
}

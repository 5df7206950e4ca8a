package minikafka_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/testcert"
)

func TestSecurityOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opts []minikafka.Option
		want string
	}{
		{[]minikafka.Option{minikafka.WithTLS(&tls.Config{})}, "no certificate"},
		{[]minikafka.Option{minikafka.WithSASL(nil)}, "no users"},
		{[]minikafka.Option{minikafka.WithSASL(map[string]string{"": "p"})}, "empty name"},
		{[]minikafka.Option{minikafka.WithSASL(map[string]string{"u": "p"}, "GSSAPI")}, "unknown mechanism"},
		{[]minikafka.Option{minikafka.WithSASLMaxReauth(time.Minute)}, "WithSASLMaxReauth without WithSASL"},
		{[]minikafka.Option{minikafka.WithSASL(map[string]string{"u": "p"}), minikafka.WithSASLMaxReauth(-time.Second)}, "want 0 (off) or at least 1ms"},
		{[]minikafka.Option{minikafka.WithSASL(map[string]string{"u": "p"}), minikafka.WithSASLMaxReauth(time.Microsecond)}, "want 0 (off) or at least 1ms"},
	} {
		startFails(t, c.want, c.opts...)
	}
}

// SASL_SSL with mutual TLS through the public options: WithTopic works
// (the program's own requests need no login), a client with certificate
// and password produces and consumes, one without a certificate or with a
// wrong password is refused.
func TestWithTLSAndSASL(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
		minikafka.WithTLS(cs.ServerConfig(true)),
		minikafka.WithSASL(map[string]string{"app": "pw1"}, "SCRAM-SHA-256"),
		minikafka.WithTopic("secure", 2))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := func(withCert bool, pass string, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr()),
			kgo.DialTLSConfig(cs.ClientConfig(withCert)),
			kgo.SASL(scram.Auth{User: "app", Pass: pass}.AsSha256Mechanism())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	p := client(true, "pw1", kgo.DefaultProduceTopic("secure"))
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	c := client(true, "pw1", kgo.ConsumeTopics("secure"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got == 0; {
		fs := c.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no record within 30 s")
		}
		got = len(fs.Records())
	}

	short, cancelShort := context.WithTimeout(ctx, 10*time.Second)
	defer cancelShort()
	if err := client(false, "pw1").Ping(short); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client without certificate: %v", err)
	}
	if err := client(true, "wrong").Ping(short); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: %v", err)
	}
}

// saslFrame writes req with a request header v1 (null client id) and
// returns the body of its response (header stripped).
func saslFrame(t *testing.T, c net.Conn, corr int32, req kmsg.Request) ([]byte, error) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := c.Write(b); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	resp := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, resp); err != nil {
		return nil, err
	}
	resp = resp[4:]
	if req.IsFlexible() {
		resp = resp[1:]
	}
	return resp, nil
}

// WithSASLMaxReauth reaches the broker: the session lifetime is announced
// and a connection that does not re-authenticate is closed after it.
func TestWithSASLMaxReauth(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
		minikafka.WithSASL(map[string]string{"app": "pw1"}, "PLAIN"),
		minikafka.WithSASLMaxReauth(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	if _, err := saslFrame(t, c, 1, hs); err != nil {
		t.Fatal(err)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00app\x00pw1")
	body, err := saslFrame(t, c, 2, auth)
	if err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 300 {
		t.Fatalf("SaslAuthenticate: %+v, %v", resp, err)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	if _, err := saslFrame(t, c, 3, md); err != nil {
		t.Fatalf("metadata within the session: %v", err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := saslFrame(t, c, 4, md); err == nil {
		t.Fatal("metadata answered after the session ended")
	}
}

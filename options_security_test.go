package minikafka_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
	} {
		b, err := minikafka.Start(context.Background(), append(c.opts, minikafka.WithInMemory())...)
		if err == nil {
			b.Close()
			t.Errorf("started; want an error containing %q", c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q, want it to contain %q", err, c.want)
		}
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

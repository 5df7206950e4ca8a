package minikafka_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/minikafka/minikafka"
)

// WithSASLOAuthBearer alone offers OAUTHBEARER only; beside WithSASL it is
// added to the password mechanisms.
func TestWithSASLOAuthBearer(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	tok := enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(fmt.Sprintf(`{"sub":"svc","exp":%d}`, time.Now().Add(time.Hour).Unix()))) + "."
	ping := func(addr string, m kgo.Opt) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), m)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return cl.Ping(ctx)
	}
	bearer := kgo.SASL(oauth.Auth{Token: tok}.AsMechanism())
	pw := kgo.SASL(plain.Auth{User: "app", Pass: "pw"}.AsMechanism())

	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithSASLOAuthBearer(minikafka.OAuthBearerConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := ping(b.Addrs()[0], bearer); err != nil {
		t.Fatal(err)
	}
	if err := ping(b.Addrs()[0], pw); err == nil || !strings.Contains(err.Error(), "UNSUPPORTED_SASL_MECHANISM") {
		t.Fatalf("PLAIN on an OAUTHBEARER-only broker: %v", err)
	}

	b2, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithSASL(map[string]string{"app": "pw"}),
		minikafka.WithSASLOAuthBearer(minikafka.OAuthBearerConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	for _, m := range []kgo.Opt{bearer, pw} {
		if err := ping(b2.Addrs()[0], m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
		minikafka.WithSASLOAuthBearer(minikafka.OAuthBearerConfig{JWKSFile: "/nonexistent/jwks.json"})); err == nil || !strings.Contains(err.Error(), "JWKS") {
		t.Fatalf("missing JWKS file: %v", err)
	}
}

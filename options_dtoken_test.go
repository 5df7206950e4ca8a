package minikafka_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
)

// WithDelegationTokens through the public options: the configured
// secret keys the HMAC, the configured expiry time applies, and a client
// logging in with the token writes to a topic; the token outlives a
// restart on the same data dir.
func TestWithDelegationTokens(t *testing.T) {
	startFails(t, "WithDelegationTokens without WithSASL", minikafka.WithDelegationTokens(minikafka.DelegationTokenConfig{}))
	startFails(t, "negative lifetime", minikafka.WithSASL(map[string]string{"u": "p"}),
		minikafka.WithDelegationTokens(minikafka.DelegationTokenConfig{ExpiryTime: -time.Second}))

	dir := t.TempDir()
	opts := []minikafka.Option{minikafka.WithDataDir(dir), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSASL(map[string]string{"app": "pw1"}, "SCRAM-SHA-512"),
		minikafka.WithDelegationTokens(minikafka.DelegationTokenConfig{Secret: "k3y", ExpiryTime: time.Hour}),
		minikafka.WithTopic("jobs", 1)}
	b, err := minikafka.Start(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := func(addr string, mech scram.Auth, more ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(mech.AsSha512Mechanism())}, more...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	tok, err := kadm.NewClient(client(b.Addr(), scram.Auth{User: "app", Pass: "pw1"})).CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha512.New, []byte("k3y"))
	mac.Write([]byte(tok.TokenID))
	if !hmac.Equal(mac.Sum(nil), tok.HMAC) {
		t.Fatal("the HMAC is not HmacSHA512(secret, token ID)")
	}
	if d := tok.ExpiryTimestamp.Sub(tok.IssueTimestamp); d != time.Hour {
		t.Fatalf("expires %v after issue, want the configured hour", d)
	}
	login := scram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}
	if err := client(b.Addr(), login, kgo.DefaultProduceTopic("jobs")).ProduceSync(ctx, &kgo.Record{Value: []byte("j1")}).FirstErr(); err != nil {
		t.Fatalf("produce with the token: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b2, err := minikafka.Start(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if err := client(b2.Addr(), login, kgo.DefaultProduceTopic("jobs")).ProduceSync(ctx, &kgo.Record{Value: []byte("j2")}).FirstErr(); err != nil {
		t.Fatalf("produce with the token after a restart: %v", err)
	}
}

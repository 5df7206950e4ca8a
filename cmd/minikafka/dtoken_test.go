package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// MINIKAFKA_DELEGATION_TOKEN_SECRET and -delegation-token-expiry-time
// reach the broker: a token's HMAC is HmacSHA512 under that secret and it
// expires after that time. Without SASL users the flags are refused.
func TestRunDelegationTokens(t *testing.T) {
	b := runStarted(t, map[string]string{"MINIKAFKA_DELEGATION_TOKEN_SECRET": "cli-secret"},
		"-sasl-users", "app:pw1", "-delegation-token-expiry-time", "2h")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.SASL(scram.Auth{User: "app", Pass: "pw1"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tok, err := kadm.NewClient(cl).CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha512.New, []byte("cli-secret"))
	mac.Write([]byte(tok.TokenID))
	if !hmac.Equal(mac.Sum(nil), tok.HMAC) {
		t.Fatal("HMAC not keyed by MINIKAFKA_DELEGATION_TOKEN_SECRET")
	}
	if d := tok.ExpiryTimestamp.Sub(tok.IssueTimestamp); d != 2*time.Hour {
		t.Fatalf("expires %v after issue, want 2h", d)
	}

	none := func(string) (string, bool) { return "", false }
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-in-memory", "-delegation-token-secret", "x"}, none, io.Discard, &out, nil); code != 2 ||
		!strings.Contains(out.String(), "need SASL users") {
		t.Errorf("-delegation-token-secret without users: exit %d, %q", code, out.String())
	}
	out.Reset()
	if _, err := parseSettings([]string{"-delegation-token-max-lifetime", "-1h"}, none, &out); err == nil || !strings.Contains(out.String(), "want 0") {
		t.Errorf("negative max lifetime: %v %q", err, out.String())
	}
}

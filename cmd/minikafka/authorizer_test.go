package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestAuthorizerFlagErrors: the authorizer's flags refuse bad values and
// settings that need -authorizer, naming the flag; run exits 2.
func TestAuthorizerFlagErrors(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	var stderr bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-super-users", "User:admin"}, "-super-users needs -authorizer"},
		{[]string{"-allow-everyone-if-no-acl-found"}, "-allow-everyone-if-no-acl-found needs -authorizer"},
		{[]string{"-authorizer", "-super-users", "User:admin;admin"}, `-super-users: "admin" is not Type:name`},
		{[]string{"-authorizer", "-super-users", "User:"}, `-super-users: "User:" is not Type:name`},
		{[]string{"-authorizer", "-super-users", ":admin"}, `-super-users: ":admin" is not Type:name`},
	} {
		stderr.Reset()
		if _, err := parseSettings(c.args, none, &stderr); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: err %v, stderr %q, want %q", c.args, err, stderr.String(), c.want)
		}
	}
	s, err := parseSettings([]string{"-authorizer", "-super-users", " User:admin ; User:ops;"}, none, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if users, err := parseSuperUsers(s.authorizer.superUsers); err != nil || strings.Join(users, ",") != "User:admin,User:ops" {
		t.Fatalf("super users %q, %v", users, err)
	}

	// A bad mapping rule stops the start before the broker opens, naming
	// the flag, with or without -authorizer (quotas use the rules too).
	for _, args := range [][]string{{"-authorizer", "-ssl-principal-mapping-rules", "RULE:nothing"},
		{"-ssl-principal-mapping-rules", "RULE:(/$1/"}, {"-ssl-principal-mapping-rules", "DEFAULT,bogus"}} {
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"-in-memory", "-listen", "127.0.0.1:0"}, args...), none, io.Discard, &out, nil)
		if code != 2 || !strings.Contains(out.String(), "-ssl-principal-mapping-rules ") || !strings.Contains(out.String(), "invalid rule") {
			t.Errorf("%q: exit %d, stderr %q", args, code, out.String())
		}
	}
}

// TestAuthorizerFlags: -authorizer with -super-users enforces ACLs on the
// started broker (a super user may create a topic, another user may not),
// -allow-everyone-if-no-acl-found opens unnamed resources, and the
// settings come from the environment too.
func TestAuthorizerFlags(t *testing.T) {
	b := runStarted(t, map[string]string{"MINIKAFKA_SUPER_USERS": "User:admin", "MINIKAFKA_SASL_USERS": "admin:pw,bob:pw"},
		"-authorizer", "-sasl-mechanisms", "PLAIN", "-ssl-principal-mapping-rules", "RULE:^CN=(.*?),.*$/$1/,DEFAULT")
	create := func(addr, user string) error {
		opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0)}
		if user != "" {
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: "pw"}.AsMechanism()))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "t-"+user)
		if err != nil {
			return err
		}
		return r.Err
	}
	if err := create(b.Addr(), "admin"); err != nil {
		t.Fatalf("super user: %v", err)
	}
	if err := create(b.Addr(), "bob"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	open := runStarted(t, nil, "-authorizer", "-allow-everyone-if-no-acl-found")
	if err := create(open.Addr(), ""); err != nil {
		t.Fatalf("anonymous with allow-everyone: %v", err)
	}
	closed := runStarted(t, nil, "-authorizer")
	if err := create(closed.Addr(), ""); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("anonymous without ACLs: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
}

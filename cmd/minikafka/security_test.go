package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/testcert"
)

func TestSecurityFlags(t *testing.T) {
	env := map[string]string{
		"MINIKAFKA_TLS_CERT":        "c.pem",
		"MINIKAFKA_SASL_USERS":      "alice:pw1,bob:p:w:2",
		"MINIKAFKA_SASL_MAX_REAUTH": "90s",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{"-tls-key", "k.pem", "-sasl-mechanisms", "SCRAM-SHA-256"}, lookup, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	sec := s.security
	if sec.tlsCert != "c.pem" || sec.tlsKey != "k.pem" || sec.saslMechanisms != "SCRAM-SHA-256" || sec.saslMaxReauth != 90*time.Second {
		t.Fatalf("security settings %+v", sec)
	}
	users, err := parseUsers(strings.ReplaceAll(sec.saslUsers, ",", "\n"), "x")
	if err != nil || users["alice"] != "pw1" || users["bob"] != "p:w:2" {
		t.Fatalf("users %v, %v", users, err)
	}

	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-tls-cert", "c.pem"}, "-tls-cert and -tls-key go together"},
		{[]string{"-tls-client-ca", "ca.pem"}, "-tls-client-ca needs -tls-cert"},
		{[]string{"-sasl-mechanisms", "GSSAPI"}, `unknown mechanism "GSSAPI"`},
		{[]string{"-sasl-users", "alice"}, "entry 1: want user:password"},
		{[]string{"-sasl-users", "alice:"}, "(user alice): empty password"},
		{[]string{"-sasl-max-reauth", "-1s"}, "-sasl-max-reauth -1s: want 0 (off) or at least 1ms"},
		{[]string{"-sasl-max-reauth", "10us"}, "-sasl-max-reauth 10µs: want 0 (off) or at least 1ms"},
		{[]string{"-sasl-max-reauth", "soon"}, `invalid value "soon" for flag -sasl-max-reauth`},
	} {
		stderr.Reset()
		if _, err := parseSettings(c.args, none, &stderr); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: err %v, stderr %q, want %q", c.args, err, stderr.String(), c.want)
		}
	}
	// Problems found reading files: run exits 2 with a message.
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-in-memory", "-tls-cert", "/nonexistent.pem", "-tls-key", "/nonexistent.pem"}, none, io.Discard, &out, nil); code != 2 || !strings.Contains(out.String(), "-tls-cert/-tls-key") {
		t.Errorf("missing cert: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"-in-memory", "-sasl-max-reauth", "1m"}, none, io.Discard, &out, nil); code != 2 || !strings.Contains(out.String(), "-sasl-max-reauth needs SASL users") {
		t.Errorf("-sasl-max-reauth without users: exit %d, %q", code, out.String())
	}
}

// TestRunTLSAndSASL runs main with -tls-cert/-tls-key/-tls-client-ca and a
// users file, and a kgo client with certificate and SCRAM-SHA-512 produces
// and consumes.
func TestRunTLSAndSASL(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := cs.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	usersFile := filepath.Join(dir, "users")
	if err := os.WriteFile(usersFile, []byte("# app users\napp:file-pass\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := runStarted(t, map[string]string{"MINIKAFKA_TLS_CLIENT_CA": files.CA},
		"-tls-cert", files.ServerCert, "-tls-key", files.ServerKey, "-sasl-users-file", usersFile)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation(),
		kgo.DialTLSConfig(cs.ClientConfig(true)),
		kgo.SASL(scram.Auth{User: "app", Pass: "file-pass"}.AsSha512Mechanism()),
		kgo.ConsumeTopics("secured"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "secured", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var got []*kgo.Record
	for len(got) == 0 && pctx.Err() == nil {
		got = append(got, cl.PollFetches(pctx).Records()...)
	}
	if len(got) != 1 || string(got[0].Value) != "v" {
		t.Fatalf("consumed %v", got)
	}
}

// TestRunForwardsToSecuredUpstream runs main with the uplink flags
// -upstream-tls-ca and -upstream-sasl-* against an upstream that requires
// TLS and SCRAM: the flags wire up, and a record arrives.
func TestRunForwardsToSecuredUpstream(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	files, err := cs.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	up, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
		minikafka.WithTLS(cs.ServerConfig(false)), minikafka.WithSASL(map[string]string{"edge": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() }) // after the local broker stops (runStarted's cleanup)
	b := runStarted(t, map[string]string{"MINIKAFKA_UPSTREAM_SASL_PASSWORD": "pw"},
		"-upstream", up.Addr(), "-forward", "edge-*", "-upstream-tls-ca", files.CA,
		"-upstream-sasl-mechanism", "SCRAM-SHA-256", "-upstream-sasl-user", "edge")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "edge-1", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(up.Addr()), kgo.DialTLSConfig(cs.ClientConfig(false)),
		kgo.SASL(scram.Auth{User: "edge", Pass: "pw"}.AsSha512Mechanism()),
		kgo.ConsumeTopics("edge-1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []*kgo.Record
	for len(got) == 0 && pctx.Err() == nil {
		got = append(got, cons.PollFetches(pctx).Records()...)
	}
	if len(got) != 1 || string(got[0].Value) != "v" {
		t.Fatalf("upstream got %v; forwarders %+v", got, b.ForwardStats())
	}
}

// A CA file that is missing or holds no PEM certificate is named in the
// error, for the listener's client CAs and for the upstream's.
func TestCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	files, err := cs.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		path, want string
	}{
		{missing, "no such file"},
		{notPEM, "no PEM certificates"},
	} {
		s := securitySettings{tlsCert: files.ServerCert, tlsKey: files.ServerKey, tlsClientCA: tc.path}
		if _, err := s.options(); err == nil || !strings.Contains(err.Error(), "-tls-client-ca") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-tls-client-ca %s: %v", tc.path, err)
		}
		u := uplinkSettings{upstream: "127.0.0.1:1", tlsCA: tc.path}
		if _, err := u.options(); err == nil || !strings.Contains(err.Error(), "-upstream-tls-ca") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-upstream-tls-ca %s: %v", tc.path, err)
		}
	}
}

// TestRunSASLMaxReauth: MINIKAFKA_SASL_MAX_REAUTH reaches the broker, which
// announces it as the session lifetime of a PLAIN login.
func TestRunSASLMaxReauth(t *testing.T) {
	b := runStarted(t, map[string]string{"MINIKAFKA_SASL_MAX_REAUTH": "90s"}, "-sasl-users", "app:pw1")
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	roundTrip := func(req kmsg.Request, resp kmsg.Response) {
		t.Helper()
		f := binary.BigEndian.AppendUint32(nil, 0)
		f = binary.BigEndian.AppendUint16(f, uint16(req.Key()))
		f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
		f = append(f, 0, 0, 0, 1, 0xff, 0xff) // correlation id, null client id
		f = req.AppendTo(f)
		binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		if _, err := c.Write(f); err != nil {
			t.Fatal(err)
		}
		var hdr [8]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			t.Fatal(err)
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:])-4)
		if _, err := io.ReadFull(c, body); err != nil {
			t.Fatal(err)
		}
		resp.SetVersion(req.GetVersion())
		if err := resp.ReadFrom(body); err != nil {
			t.Fatal(err)
		}
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	roundTrip(hs, kmsg.NewPtrSASLHandshakeResponse())
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00app\x00pw1")
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	roundTrip(auth, resp)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 90000 {
		t.Fatalf("SaslAuthenticate: code %d, lifetime %d ms", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
}

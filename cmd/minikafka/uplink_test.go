package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

func TestUplinkFlags(t *testing.T) {
	env := map[string]string{
		"MINIKAFKA_UPSTREAM":                "up1:9092,up2:9092",
		"MINIKAFKA_FORWARD":                 "edge-* /^logs\\.(a|b)$/=site1.",
		"MINIKAFKA_UPSTREAM_SASL_PASSWORD":  "secret",
		"MINIKAFKA_UPSTREAM_SASL_MECHANISM": "SCRAM-SHA-512",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{"-forward", "metrics", "-upstream-sasl-user", "u", "-upstream-tls", "-spool-max-bytes", "1048576"}, lookup, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	u := s.uplink
	if u.upstream != "up1:9092,up2:9092" || strings.Join(u.forward, " ") != `edge-* /^logs\.(a|b)$/=site1. metrics` ||
		u.mechanism != "SCRAM-SHA-512" || u.user != "u" || u.pass != "secret" || !u.tls || u.spoolMax != 1<<20 {
		t.Fatalf("uplink settings %+v", u)
	}
	if opts, err := u.options(); err != nil || len(opts) != 5 {
		t.Fatalf("options: %d, %v", len(opts), err)
	}

	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-forward", "x"}, "-forward needs -upstream"},
		{[]string{"-upstream", "h:1"}, "-upstream needs at least one -forward"},
		{[]string{"-upstream", "h:1", "-forward", "x", "-upstream-sasl-mechanism", "GSSAPI", "-upstream-sasl-user", "u"}, "must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		{[]string{"-upstream", "h:1", "-forward", "["}, "bad glob"},
		{[]string{"-upstream", "h:1", "-forward", "x", "-spool-max-bytes", "0"}, "-spool-max-bytes: must be positive"},
		{[]string{"-forward-checkpoints", "edge"}, "-forward-checkpoints needs -upstream and -forward"},
		{[]string{"-upstream", "h:1", "-forward", "x", "-forward-checkpoints", "edge/site"}, `-forward-checkpoints: checkpoints alias "edge/site"`},
	} {
		stderr.Reset()
		if _, err := parseSettings(c.args, none, &stderr); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: err %v, stderr %q, want %q", c.args, err, stderr.String(), c.want)
		}
	}
}

// TestRunForwards runs the binary's main in process with -upstream and
// -forward and checks that a produced record reaches the upstream.
func TestRunForwards(t *testing.T) {
	up, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() }) // after the local broker stops (runStarted's cleanup)
	b := runStarted(t, nil, "-upstream", up.Addr(), "-forward", "edge-*=central.")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Roomy: produce, forward and consume upstream on a loaded 2-core -race run.
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "edge-1", Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(up.Addr()), kgo.ConsumeTopics("central.edge-1"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []*kgo.Record
	for len(got) == 0 && pctx.Err() == nil {
		got = append(got, cons.PollFetches(pctx).Records()...)
	}
	if len(got) != 1 || string(got[0].Key) != "k" || string(got[0].Value) != "v" {
		t.Fatalf("upstream got %v", got)
	}
}

// The spool key flags: a key file in each accepted form, refused when
// others may read it, when it is not a 256-bit key, or without forwarding.
func TestSpoolKeyFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	key := bytes.Repeat([]byte{0x5a}, 32)
	good := write("key.hex", []byte(hex.EncodeToString(key)+"\n"), 0o600)
	old := write("old.b64", []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))), 0o400)
	none := func(string) (string, bool) { return "", false }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{"-upstream", "h:1", "-forward", "x", "-spool-encryption-key-file", good,
		"-spool-encryption-previous-key-file", old}, none, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if opts, err := s.uplink.options(); err != nil || len(opts) != 4 {
		t.Fatalf("options: %d, %v", len(opts), err)
	}
	for _, c := range []struct {
		file string
		want string
	}{
		{write("open", []byte(hex.EncodeToString(key)), 0o644), "must not be accessible to group or others"},
		{write("short", []byte(hex.EncodeToString(key[:16])), 0o600), "128-bit key"},
		{write("junk", []byte("not a key"), 0o600), "32 bytes"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		s, err := parseSettings([]string{"-upstream", "h:1", "-forward", "x", "-spool-encryption-key-file", c.file}, none, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.uplink.options(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-spool-encryption-key-file", good}, "needs -upstream and -forward"},
		{[]string{"-upstream", "h:1", "-forward", "x", "-spool-encryption-previous-key-file", old}, "needs -spool-encryption-key-file"},
	} {
		stderr.Reset()
		if _, err := parseSettings(c.args, none, &stderr); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: err %v, stderr %q, want %q", c.args, err, stderr.String(), c.want)
		}
	}
}

// The start of an edge broker names what it forwards and where, after the
// listening line.
func TestForwardingStartLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	started := make(chan *minikafka.Broker, 1)
	done := make(chan int, 1)
	none := func(string) (string, bool) { return "", false }
	go func() {
		done <- run(ctx, []string{"-in-memory", "-listen", "127.0.0.1:0", "-log-level", "error",
			"-upstream", "127.0.0.1:1", "-forward", "edge-*", "-forward", "/^metrics\\./=site1."}, none, &out, io.Discard, started)
	}()
	select {
	case <-started:
	case code := <-done:
		t.Fatalf("run exited with %d", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "minikafka listening on ") ||
		lines[1] != `minikafka forwarding edge-* /^metrics\./=site1. to upstream 127.0.0.1:1` {
		t.Fatalf("start lines: %q", lines)
	}
}

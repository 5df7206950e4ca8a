package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/minikafka/minikafka"
)

func TestListenerFlags(t *testing.T) {
	env := map[string]string{
		"MINIKAFKA_LISTENERS":            "INTERNAL://:9092,EXTERNAL://:29092",
		"MINIKAFKA_ADVERTISED_LISTENERS": "INTERNAL://minikafka:9092",
		"MINIKAFKA_SASL_USERS":           "app:pw",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{
		"-advertised-listeners", "INTERNAL://minikafka:9092,EXTERNAL://localhost:29092",
		"-listener-security-protocol-map", "INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
	}, lookup, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	specs, err := s.listeners.specs(s.listen, &s.security)
	if err != nil {
		t.Fatal(err)
	}
	want := []minikafka.ListenerSpec{
		{Name: "INTERNAL", Addr: ":9092", Advertised: "minikafka:9092", Security: "PLAINTEXT"},
		{Name: "EXTERNAL", Addr: ":29092", Advertised: "localhost:29092", Security: "SASL_PLAINTEXT"},
	}
	if len(specs) != 2 || specs[0] != want[0] || specs[1] != want[1] {
		t.Fatalf("specs %+v, want %+v", specs, want)
	}

	// Without -listeners, -listen is the one listener, named after the
	// protocol the security flags select.
	s, err = parseSettings([]string{"-listen", "127.0.0.1:0", "-advertised-listeners", "SASL_PLAINTEXT://broker:9092", "-sasl-users", "a:b"}, none, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if specs, err = s.listeners.specs(s.listen, &s.security); err != nil || len(specs) != 1 ||
		specs[0] != (minikafka.ListenerSpec{Name: "SASL_PLAINTEXT", Addr: "127.0.0.1:0", Advertised: "broker:9092", Security: "SASL_PLAINTEXT"}) {
		t.Fatalf("specs %+v, %v", specs, err)
	}

	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"-listeners", "INTERNAL://:9092", "-advertised-listeners", "OTHER://h:1", "-listener-security-protocol-map", "INTERNAL:PLAINTEXT"},
			want: "advertised listener OTHER is not one of the listeners (INTERNAL)"},
		{args: []string{"-listeners", "PLAINTEXT://:9092,plaintext://:9093"}, want: "PLAINTEXT given twice"},
		{args: []string{"-listeners", "PLAINTEXT://:9092,SSL://127.0.0.1:9092", "-tls-cert", "c", "-tls-key", "k"}, want: "listeners PLAINTEXT and SSL both use port 9092"},
		{args: []string{"-listeners", "INTERNAL://:9092"}, want: "listener INTERNAL: no security protocol"},
		{args: []string{"-listeners", "A://:9092", "-listener-security-protocol-map", "A:KERBEROS"}, want: `unknown security protocol "KERBEROS"`},
		{args: []string{"-listeners", "A:9092"}, want: "want NAME://host:port"},
		{args: []string{"-listeners", "SSL://:9093"}, want: "listener SSL is SSL: it needs -tls-cert and -tls-key"},
		{args: []string{"-listeners", "SASL_SSL://:9093", "-tls-cert", "c", "-tls-key", "k"}, want: "listener SASL_SSL is SASL_SSL: it needs -sasl-users or -sasl-users-file"},
		{args: []string{"-listeners", "PLAINTEXT://:9093", "-tls-cert", "c", "-tls-key", "k"}, want: "-tls-cert is given but no listener is SSL"},
		{args: []string{"-listeners", "PLAINTEXT://:9093"}, env: map[string]string{"MINIKAFKA_SASL_USERS": "a:b"}, want: "SASL users are given but no listener is SASL"},
		{args: []string{"-listen", ":9092", "-listeners", "PLAINTEXT://:9093"}, want: "-listen and -listeners cannot be combined"},
		{args: []string{"-listeners", "PLAINTEXT://:9093"}, env: map[string]string{"MINIKAFKA_LISTEN": ":1"}, want: "-listen and -listeners cannot be combined"},
		{args: []string{"-advertise", "h:1", "-listeners", "PLAINTEXT://:9093"}, want: "-advertise and -listeners/-advertised-listeners cannot be combined"},
		{args: []string{"-advertise", "h:1", "-advertised-listeners", "PLAINTEXT://h:2"}, want: "-advertise and -listeners/-advertised-listeners cannot be combined"},
		{args: []string{"-advertised-listeners", "INTERNAL://h:2"}, want: "advertised listener INTERNAL is not one of the listeners (PLAINTEXT)"},
		{env: map[string]string{"MINIKAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT"}, want: "want NAME:PROTOCOL"},
	} {
		stderr.Reset()
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		if _, err := parseSettings(c.args, lookup, &stderr); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q %v: err %v, stderr %q, want %q", c.args, c.env, err, stderr.String(), c.want)
		}
	}
}

func none(string) (string, bool) { return "", false }

// brokerOf asks, through a client seeded with addr, for the address
// Metadata and FindCoordinator hand out.
func brokerOf(t *testing.T, ctx context.Context, addr string, opts ...kgo.Opt) (meta, coord string) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	mresp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil || len(mresp.Brokers) != 1 {
		t.Fatalf("metadata through %s: %v", addr, err)
	}
	freq := kmsg.NewPtrFindCoordinatorRequest()
	freq.CoordinatorKey = "g"
	fresp, err := freq.RequestWith(ctx, cl)
	if err != nil || fresp.ErrorCode != 0 {
		t.Fatalf("find coordinator through %s: %v %+v", addr, err, fresp)
	}
	return net.JoinHostPort(mresp.Brokers[0].Host, strconv.Itoa(int(mresp.Brokers[0].Port))),
		net.JoinHostPort(fresp.Host, strconv.Itoa(int(fresp.Port)))
}

// run in process with -listeners, -advertised-listeners and the map:
// each listener hands out its own advertised address, records cross, and
// the startup line names both.
func TestRunTwoListeners(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan *minikafka.Broker, 1)
	done := make(chan int, 1)
	var out syncBuffer
	go func() {
		done <- run(ctx, []string{"-in-memory", "-log-level", "error",
			"-listeners", "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
			"-advertised-listeners", "EXTERNAL://localhost:0",
			"-listener-security-protocol-map", "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT"}, none, &out, io.Discard, started)
	}()
	var b *minikafka.Broker
	select {
	case b = <-started:
	case code := <-done:
		t.Fatalf("run exited with %d", code)
	}
	in, _ := b.Listener("INTERNAL")
	ext, _ := b.Listener("EXTERNAL")
	_, extPort, _ := net.SplitHostPort(ext.Addr.String())
	if in.Advertised != in.Addr.String() || ext.Advertised != net.JoinHostPort("localhost", extPort) {
		t.Fatalf("INTERNAL %+v, EXTERNAL %+v", in, ext)
	}
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	for _, l := range []minikafka.ListenerInfo{in, ext} {
		if meta, coord := brokerOf(t, tctx, l.Advertised); meta != l.Advertised || coord != l.Advertised {
			t.Fatalf("through %s: metadata %s, coordinator %s; want %s", l.Name, meta, coord, l.Advertised)
		}
	}
	produceN(t, in.Advertised, "t", 0, 5)
	produceN(t, ext.Advertised, "t", 5, 5)
	if got := consumeAll(t, ext.Advertised, "t", 10); len(got) != 10 {
		t.Fatalf("consumed %v", got)
	}
	want := "minikafka listening on INTERNAL://" + in.Addr.String() + " (PLAINTEXT), advertised as " + in.Advertised +
		"; EXTERNAL://" + ext.Addr.String() + " (PLAINTEXT), advertised as " + ext.Advertised + "; data in memory"
	if s := out.String(); !strings.Contains(s, want) {
		t.Fatalf("stdout %q, want %q", s, want)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// -advertised-listeners alone renames the address of -listen's listener.
func TestRunAdvertisedListenersWithListen(t *testing.T) {
	b := runStarted(t, nil, "-advertised-listeners", "PLAINTEXT://localhost:0")
	_, port, _ := net.SplitHostPort(b.ListenAddr().String())
	if want := net.JoinHostPort("localhost", port); b.Addr() != want {
		t.Fatalf("advertised %s, want %s", b.Addr(), want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if meta, _ := brokerOf(t, ctx, b.Addr()); meta != b.Addr() {
		t.Fatalf("metadata %s, want %s", meta, b.Addr())
	}
}

var listenerRE = regexp.MustCompile(`(\w+)://(\S+) \((\w+)\), advertised as ([^;\s]+)`)

// The binary, configured through MINIKAFKA_* variables, serves a
// PLAINTEXT listener beside a SASL_PLAINTEXT one: each hands out its own
// address, the SASL one refuses a client without login, records produced
// on one are consumed on the other, and SIGTERM stops it cleanly.
func TestBinaryTwoListeners(t *testing.T) {
	p := serve(t, []string{
		"MINIKAFKA_LISTENERS=INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
		"MINIKAFKA_ADVERTISED_LISTENERS=INTERNAL://127.0.0.1:0,EXTERNAL://localhost:0",
		"MINIKAFKA_LISTENER_SECURITY_PROTOCOL_MAP=INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
		"MINIKAFKA_SASL_USERS=app:secret",
	}, "-in-memory")
	found := map[string][]string{}
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		if strings.HasPrefix(line, "minikafka listening on ") {
			for _, m := range listenerRE.FindAllStringSubmatch(line, -1) {
				found[m[1]] = m[2:]
			}
		}
	}
	in, ext := found["INTERNAL"], found["EXTERNAL"]
	if len(found) != 2 || in[1] != "PLAINTEXT" || ext[1] != "SASL_PLAINTEXT" || in[2] != in[0] || !strings.HasPrefix(ext[2], "localhost:") {
		t.Fatalf("startup line lists %v\nstdout:\n%s", found, p.stdout)
	}
	if p.addr != in[2] {
		t.Fatalf("first advertised address %s, want INTERNAL's %s", p.addr, in[2])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	login := kgo.SASL(plain.Auth{User: "app", Pass: "secret"}.AsMechanism())
	if meta, coord := brokerOf(t, ctx, ext[2], login); meta != ext[2] || coord != ext[2] {
		t.Fatalf("EXTERNAL hands out %s, %s; want %s", meta, coord, ext[2])
	}
	if meta, coord := brokerOf(t, ctx, in[2]); meta != in[2] || coord != in[2] {
		t.Fatalf("INTERNAL hands out %s, %s; want %s", meta, coord, in[2])
	}

	anon, err := kgo.NewClient(kgo.SeedBrokers(ext[2]))
	if err != nil {
		t.Fatal(err)
	}
	short, scancel := context.WithTimeout(ctx, 3*time.Second)
	defer scancel()
	if err := anon.Ping(short); err == nil {
		t.Fatal("a client without login got an answer on EXTERNAL")
	}
	anon.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(ext[2]), login, kgo.DefaultProduceTopic("x"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("via-external")).FirstErr(); err != nil {
		t.Fatalf("produce on EXTERNAL: %v", err)
	}
	if got := consumeAll(t, in[2], "x", 1); !got["via-external"] {
		t.Fatalf("consumed on INTERNAL: %v", got)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, p.stderr)
	}
	noPanic(t, p)
}

// A busy port on one listener: exit 1 with the listener named.
func TestBinaryListenerBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	p := launch(t, nil, "-in-memory", "-listeners", "A://127.0.0.1:0,B://"+busy.Addr().String(), "-listener-security-protocol-map", "A:PLAINTEXT,B:PLAINTEXT")
	if code := p.wait(t); code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, p.stderr)
	}
	if s := p.stderr.String(); !strings.Contains(s, "listener B") || !strings.Contains(s, "choose another port in -listeners") {
		t.Fatalf("stderr:\n%s", s)
	}
	noPanic(t, p)
}

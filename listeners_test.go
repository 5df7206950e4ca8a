package minikafka_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/testcert"
	"github.com/minikafka/minikafka/minikafkatest"
)

// dialLog records every broker address a kgo client connects to.
type dialLog struct {
	mu    sync.Mutex
	addrs map[string]bool
}

func (d *dialLog) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.addrs == nil {
		d.addrs = map[string]bool{}
	}
	d.addrs[net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))] = true
}

func (d *dialLog) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for a := range d.addrs {
		out = append(out, a)
	}
	return out
}

// handedOut asks, through cl, for the addresses the broker hands out in
// Metadata, FindCoordinator and DescribeCluster.
func handedOut(t *testing.T, ctx context.Context, cl *kgo.Client) (meta, coord, cluster string) {
	t.Helper()
	mresp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil || len(mresp.Brokers) != 1 {
		t.Fatalf("metadata: %v, %d brokers", err, len(mresp.Brokers))
	}
	meta = net.JoinHostPort(mresp.Brokers[0].Host, strconv.Itoa(int(mresp.Brokers[0].Port)))
	freq := kmsg.NewPtrFindCoordinatorRequest()
	freq.CoordinatorKey = "some-group"
	fresp, err := freq.RequestWith(ctx, cl)
	if err != nil || fresp.ErrorCode != 0 {
		t.Fatalf("find coordinator: %v %+v", err, fresp)
	}
	coord = net.JoinHostPort(fresp.Host, strconv.Itoa(int(fresp.Port)))
	dresp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil || dresp.ErrorCode != 0 || len(dresp.Brokers) != 1 {
		t.Fatalf("describe cluster: %v %+v", err, dresp)
	}
	cluster = net.JoinHostPort(dresp.Brokers[0].Host, strconv.Itoa(int(dresp.Brokers[0].Port)))
	return meta, coord, cluster
}

// Two listeners with different advertised addresses: a client bootstrapped
// through either sees its own listener's address in Metadata,
// FindCoordinator and DescribeCluster, connects only there, and produces
// and consumes (in a group) through it; records cross listeners.
func TestTwoListenersAdvertiseTheirOwnAddress(t *testing.T) {
	b := start(t, minikafka.WithListeners(
		minikafka.ListenerSpec{Name: "internal", Addr: "127.0.0.1:0", Advertised: "127.0.0.1:0", Security: "plaintext"},
		minikafka.ListenerSpec{Name: "EXTERNAL", Addr: "127.0.0.1:0", Advertised: "localhost:0", Security: minikafka.Plaintext},
	), minikafka.WithGroupInitialRebalanceDelay(0))
	ls := b.Listeners()
	if len(ls) != 2 || ls[0].Name != "INTERNAL" || ls[1].Name != "EXTERNAL" || ls[0].Security != "PLAINTEXT" {
		t.Fatalf("listeners %+v", ls)
	}
	for _, l := range ls {
		_, port, _ := net.SplitHostPort(l.Addr.String())
		host := map[string]string{"INTERNAL": "127.0.0.1", "EXTERNAL": "localhost"}[l.Name]
		if want := net.JoinHostPort(host, port); l.Advertised != want {
			t.Fatalf("listener %s advertised as %s, want %s", l.Name, l.Advertised, want)
		}
	}
	if b.Addr() != ls[0].Advertised || b.ListenAddr().String() != ls[0].Addr.String() || len(b.Addrs()) != 1 {
		t.Fatalf("Addr %s ListenAddr %s Addrs %v, want the first listener's", b.Addr(), b.ListenAddr(), b.Addrs())
	}
	if l, ok := b.Listener("external"); !ok || l.Advertised != ls[1].Advertised {
		t.Fatalf("Listener(external) = %+v, %v", l, ok)
	}

	ctx := ctxT(t)
	const topic = "crossing"
	for i, l := range ls {
		dials := &dialLog{}
		cl := client(t, b, kgo.SeedBrokers(l.Advertised), kgo.WithHooks(dials),
			kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
		meta, coord, cluster := handedOut(t, ctx, cl)
		if meta != l.Advertised || coord != l.Advertised || cluster != l.Advertised {
			t.Fatalf("on %s: metadata %s, coordinator %s, describe cluster %s; want %s", l.Name, meta, coord, cluster, l.Advertised)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(l.Name)}).FirstErr(); err != nil {
			t.Fatalf("produce on %s: %v", l.Name, err)
		}
		// A group consumer: its coordinator connection goes where
		// FindCoordinator said.
		c := client(t, b, kgo.SeedBrokers(l.Advertised), kgo.WithHooks(dials),
			kgo.ConsumeTopics(topic), kgo.ConsumerGroup("g-"+l.Name),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var got []string
		for len(got) < i+1 {
			fs := c.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("on %s: consumed %q before timeout", l.Name, got)
			}
			for _, r := range fs.Records() {
				got = append(got, string(r.Value))
			}
		}
		if strings.Join(got, ",") != strings.Join([]string{"INTERNAL", "EXTERNAL"}[:i+1], ",") {
			t.Fatalf("on %s: consumed %q", l.Name, got)
		}
		if err := c.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatalf("commit on %s: %v", l.Name, err)
		}
		for _, a := range dials.list() {
			if a != l.Advertised {
				t.Fatalf("client of %s connected to %s; dialed %v", l.Name, a, dials.list())
			}
		}
	}

	// DescribeConfigs reports every advertised listener.
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, client(t, b))
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("describe configs: %v", err)
	}
	want := "INTERNAL://" + ls[0].Advertised + ",EXTERNAL://" + ls[1].Advertised
	found := false
	for _, c := range resp.Resources[0].Configs {
		if c.Name == "advertised.listeners" {
			found = c.Value != nil && *c.Value == want
			if !found {
				t.Fatalf("advertised.listeners %v, want %s", c.Value, want)
			}
		}
	}
	if !found {
		t.Fatal("no advertised.listeners config")
	}
}

// A PLAINTEXT listener beside SASL_SSL and SSL ones, sharing WithTLS's
// certificate and WithSASL's users: the plaintext one serves anyone, the
// SASL_SSL one refuses unauthenticated and non-TLS clients, the SSL one
// wants TLS but no login; SaslHandshake on the plaintext listener gets
// ILLEGAL_SASL_STATE as in Kafka.
func TestPlaintextBesideSASLListener(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	b := start(t, minikafka.WithListeners(
		minikafka.ListenerSpec{Name: "PLAINTEXT", Addr: "127.0.0.1:0"},
		minikafka.ListenerSpec{Name: "SECURE", Addr: "127.0.0.1:0", Security: minikafka.SASLSSL},
		minikafka.ListenerSpec{Name: "SSL", Addr: "127.0.0.1:0"},
	), minikafka.WithTLS(cs.ServerConfig(false)), minikafka.WithSASL(map[string]string{"app": "pw"}, "PLAIN"),
		minikafka.WithTopic("t", 1))
	addr := func(name string) string {
		l, ok := b.Listener(name)
		if !ok {
			t.Fatalf("no listener %s", name)
		}
		return l.Advertised
	}
	ctx := ctxT(t)
	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		t.Cleanup(cancel)
		return c
	}
	tlsCfg := cs.ClientConfig(false)
	login := kgo.SASL(plain.Auth{User: "app", Pass: "pw"}.AsMechanism())

	plainCl := client(t, b, kgo.SeedBrokers(addr("PLAINTEXT")), kgo.DefaultProduceTopic("t"))
	if err := plainCl.ProduceSync(short(), &kgo.Record{Value: []byte("p")}).FirstErr(); err != nil {
		t.Fatalf("unauthenticated produce on PLAINTEXT: %v", err)
	}

	secure := client(t, b, kgo.SeedBrokers(addr("SECURE")), kgo.DialTLSConfig(tlsCfg), login, kgo.DefaultProduceTopic("t"))
	if err := secure.ProduceSync(short(), &kgo.Record{Value: []byte("s")}).FirstErr(); err != nil {
		t.Fatalf("authenticated produce on SECURE: %v", err)
	}
	if meta, coord, cluster := handedOut(t, ctx, secure); meta != addr("SECURE") || coord != meta || cluster != meta {
		t.Fatalf("SECURE hands out %s %s %s", meta, coord, cluster)
	}
	if err := client(t, b, kgo.SeedBrokers(addr("SECURE")), kgo.DialTLSConfig(tlsCfg)).Ping(short()); err == nil {
		t.Fatal("an unauthenticated client got an answer on SECURE")
	}
	// Proof the refusal is the SASL gate, not the connection: raw
	// ApiVersions then Metadata over TLS, no handshake: the broker
	// answers the first and closes on the second.
	conn, err := tls.Dial("tcp", addr("SECURE"), tlsCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := rawRoundTrip(conn, kmsg.NewPtrApiVersionsRequest()); err != nil {
		t.Fatalf("ApiVersions before SASL: %v", err)
	}
	if err := rawRoundTrip(conn, kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("Metadata before SASL was answered on SECURE")
	}
	if err := client(t, b, kgo.SeedBrokers(addr("SECURE")), login).Ping(short()); err == nil {
		t.Fatal("a plaintext client got an answer on SECURE")
	}

	if err := client(t, b, kgo.SeedBrokers(addr("SSL")), kgo.DialTLSConfig(tlsCfg)).Ping(short()); err != nil {
		t.Fatalf("TLS client without login on SSL: %v", err)
	}
	if err := client(t, b, kgo.SeedBrokers(addr("SSL"))).Ping(short()); err == nil {
		t.Fatal("a plaintext client got an answer on SSL")
	}
	if err := client(t, b, kgo.SeedBrokers(addr("PLAINTEXT")), login).Ping(short()); !errors.Is(err, kerr.IllegalSaslState) {
		t.Fatalf("SASL client on PLAINTEXT: %v, want ILLEGAL_SASL_STATE", err)
	}
}

// rawRoundTrip writes req (v0 header v1) and reads one response frame.
func rawRoundTrip(c net.Conn, req kmsg.Request) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	req.SetVersion(0)
	body := []byte{0, 0, 0, 0}
	body = append(body, byte(req.Key()>>8), byte(req.Key()), 0, 0, 0, 0, 0, 7, 0xff, 0xff)
	body = req.AppendTo(body)
	n := len(body) - 4
	body[0], body[1], body[2], body[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	if _, err := c.Write(body); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return err
	}
	buf := make([]byte, int(size[0])<<24|int(size[1])<<16|int(size[2])<<8|int(size[3]))
	_, err := io.ReadFull(c, buf)
	return err
}

func TestListenerOptionErrors(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	l := func(name, addr, sec string) minikafka.ListenerSpec {
		return minikafka.ListenerSpec{Name: name, Addr: addr, Security: sec}
	}
	users := minikafka.WithSASL(map[string]string{"u": "p"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // Start closes it too, on its error
	for _, c := range []struct {
		opts []minikafka.Option
		want string
	}{
		{[]minikafka.Option{minikafka.WithListeners()}, "no listeners"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", ":0", "PLAINTEXT"), l("a", ":0", "SSL"))}, "listener A given twice"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", "127.0.0.1:19092", ""), l("B", ":19092", ""))}, "no security protocol"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", "127.0.0.1:19092", "PLAINTEXT"), l("B", ":19092", "PLAINTEXT"))}, "listeners A and B both use port 19092"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", "localhost", "PLAINTEXT"))}, `listener A: address "localhost": want host:port`},
		{[]minikafka.Option{minikafka.WithListeners(l("A b", ":0", "PLAINTEXT"))}, "listener name"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", ":0", "KERBEROS"))}, `unknown security protocol "KERBEROS"`},
		{[]minikafka.Option{minikafka.WithListeners(minikafka.ListenerSpec{Name: "A", Addr: ":0", Advertised: "nohost", Security: "PLAINTEXT"})}, "advertised address"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", ":0", "SSL"))}, "listener A is SSL but WithTLS gives no certificate"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", ":0", "SASL_SSL")), minikafka.WithTLS(cs.ServerConfig(false))}, "listener A is SASL_SSL but WithSASL gives no users"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", ":0", "PLAINTEXT")), minikafka.WithTLS(cs.ServerConfig(false))}, "WithTLS is given but no listener is SSL"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", ":0", "SSL")), minikafka.WithTLS(cs.ServerConfig(false)), users}, "WithSASL is given but no listener is SASL"},
		{[]minikafka.Option{minikafka.WithListeners(l("A", "127.0.0.1:0", "PLAINTEXT")), minikafka.WithAdvertisedAddr("h:1")}, "WithAdvertisedAddr and WithListeners"},
		{[]minikafka.Option{minikafka.WithListener(ln), minikafka.WithListeners(l("A", "127.0.0.1:0", "PLAINTEXT"))}, "WithListener and WithListeners"},
		{[]minikafka.Option{minikafka.WithAdvertisedAddr("h:1"), minikafka.WithListeners(l("A", ":0", "PLAINTEXT"))}, "WithAdvertisedAddr and WithListeners"},
	} {
		startFails(t, c.want, c.opts...)
	}
}

// A busy port on the second listener fails Start and frees the first.
func TestListenersBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	first, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	firstAddr := first.Addr().String()
	first.Close()
	_, err = minikafka.Start(context.Background(), minikafka.WithListeners(
		minikafka.ListenerSpec{Name: "A", Addr: firstAddr, Security: "PLAINTEXT"},
		minikafka.ListenerSpec{Name: "B", Addr: busy.Addr().String(), Security: "PLAINTEXT"}))
	if err == nil || !strings.Contains(err.Error(), "listener B") {
		t.Fatalf("Start: %v, want a listen error naming listener B", err)
	}
	again, err := net.Listen("tcp", firstAddr)
	if err != nil {
		t.Fatalf("listener A's port still taken after the failed Start: %v", err)
	}
	again.Close()
}

// The single listener of WithListenAddr is named after its security
// protocol, as Kafka's default listener.
func TestSingleListenerName(t *testing.T) {
	b := start(t)
	ls := b.Listeners()
	if len(ls) != 1 || ls[0].Name != "PLAINTEXT" || ls[0].Security != "PLAINTEXT" || ls[0].Advertised != b.Addr() || ls[0].Addr.String() != b.ListenAddr().String() {
		t.Fatalf("listeners %+v; Addr %s ListenAddr %s", ls, b.Addr(), b.ListenAddr())
	}
}

// WithListenAddr and WithListeners override each other, the later wins,
// so minikafkatest.New (which sets WithListenAddr first) takes listeners.
func TestListenAddrAndListenersOverride(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithListeners(
		minikafka.ListenerSpec{Name: "A", Addr: "127.0.0.1:0", Security: "PLAINTEXT"},
		minikafka.ListenerSpec{Name: "B", Addr: "127.0.0.1:0", Advertised: "localhost:0", Security: "PLAINTEXT"}))
	if ls := b.Listeners(); len(ls) != 2 || ls[1].Name != "B" {
		t.Fatalf("listeners %+v", ls)
	}
	if err := minikafkatest.Client(t, b).Ping(ctxT(t)); err != nil {
		t.Fatalf("client of the first listener: %v", err)
	}
	b = start(t, minikafka.WithListeners(minikafka.ListenerSpec{Name: "A", Addr: "127.0.0.1:0", Security: "PLAINTEXT"}),
		minikafka.WithListenAddr("127.0.0.1:0"))
	if ls := b.Listeners(); len(ls) != 1 || ls[0].Name != "PLAINTEXT" {
		t.Fatalf("WithListenAddr after WithListeners: listeners %+v", ls)
	}
}

func TestParseListeners(t *testing.T) {
	got, err := minikafka.ParseListeners(
		"INTERNAL://:9092, external://0.0.0.0:29092,PLAINTEXT://[::1]:9093,SSL://127.0.0.1:9094",
		"INTERNAL://minikafka:9092,EXTERNAL://localhost:29092",
		"INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT")
	if err != nil {
		t.Fatal(err)
	}
	want := []minikafka.ListenerSpec{
		{Name: "INTERNAL", Addr: ":9092", Advertised: "minikafka:9092", Security: "PLAINTEXT"},
		{Name: "EXTERNAL", Addr: "0.0.0.0:29092", Advertised: "localhost:29092", Security: "SASL_SSL"},
		{Name: "PLAINTEXT", Addr: "[::1]:9093", Security: "PLAINTEXT"},
		{Name: "SSL", Addr: "127.0.0.1:9094", Security: "SSL"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("listener %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	for _, c := range []struct{ listeners, advertised, protocols, want string }{
		{"", "", "", "listeners: none given"},
		{"INTERNAL:9092", "", "INTERNAL:PLAINTEXT", `want NAME://host:port`},
		{"A://:9092", "B://h:9092", "A:PLAINTEXT", "advertised listener B is not one of the listeners (A)"},
		{"A://:9092,a://:9093", "", "A:PLAINTEXT", "listeners: A given twice"},
		{"A://:9092", "A://h:1,A://h:2", "A:PLAINTEXT", "advertised listeners: A given twice"},
		{"A://:9092,B://:9092", "", "A:PLAINTEXT,B:PLAINTEXT", "both use port 9092"},
		{"A://:9092", "", "", "listener A: no security protocol"},
		{"A://:9092", "", "A:TLS", `unknown security protocol "TLS"`},
		{"A://:9092", "", "A", "want NAME:PROTOCOL"},
		{"A://:9092", "", "A:SSL,A:SSL", "A given twice"},
		{"A://:90920", "", "A:SSL", `bad port "90920"`},
		{"A://:9092", "A://h", "A:SSL", `advertised address "h"`},
		{"A://:9092", "A://0.0.0.0:9092", "A:PLAINTEXT", "cannot advertise the unspecified address"},
	} {
		_, err := minikafka.ParseListeners(c.listeners, c.advertised, c.protocols)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseListeners(%q, %q, %q) = %v, want an error containing %q", c.listeners, c.advertised, c.protocols, err, c.want)
		}
	}
}

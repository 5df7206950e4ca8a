package telemetry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/records"
)

// A small protobuf writer for the OTLP messages the tests send; it is
// written from the OTLP .proto field numbers, independently of Decode.

func tag(b []byte, num, typ int) []byte { return binary.AppendUvarint(b, uint64(num<<3|typ)) }

func bytesField(b []byte, num int, v []byte) []byte {
	b = tag(b, num, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func strField(b []byte, num int, s string) []byte { return bytesField(b, num, []byte(s)) }

func varintField(b []byte, num int, v uint64) []byte {
	return binary.AppendUvarint(tag(b, num, wireVarint), v)
}

func fixed64Field(b []byte, num int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(tag(b, num, wireFixed64), v)
}

func kv(key, val string) []byte {
	any := strField(nil, 1, val)
	return bytesField(strField(nil, 1, key), 2, any)
}

func kvInt(key string, v int64) []byte {
	any := varintField(nil, 3, uint64(v))
	return bytesField(strField(nil, 1, key), 2, any)
}

// numberPoint: attributes 7, time 3, as_double 4 or as_int 6.
func numberPoint(v float64, isInt bool, attrs ...[]byte) []byte {
	var p []byte
	for _, a := range attrs {
		p = bytesField(p, 7, a)
	}
	p = fixed64Field(p, 3, uint64(time.Now().UnixNano()))
	if isInt {
		return fixed64Field(p, 6, uint64(int64(v)))
	}
	return fixed64Field(p, 4, math.Float64bits(v))
}

func gaugeMetric(name string, pts ...[]byte) []byte {
	var g []byte
	for _, p := range pts {
		g = bytesField(g, 1, p)
	}
	return bytesField(strField(nil, 1, name), 5, g)
}

func sumMetric(name string, delta bool, pts ...[]byte) []byte {
	var s []byte
	for _, p := range pts {
		s = bytesField(s, 1, p)
	}
	temp := uint64(2)
	if delta {
		temp = 1
	}
	s = varintField(s, 2, temp)
	s = varintField(s, 3, 1)
	return bytesField(strField(nil, 1, name), 7, s)
}

func histogramMetric(name string, count uint64, sum float64) []byte {
	p := fixed64Field(nil, 4, count)
	p = fixed64Field(p, 5, math.Float64bits(sum))
	p = bytesField(p, 9, kv("node_id", "1"))
	h := bytesField(nil, 1, p)
	h = varintField(h, 2, 1)
	return bytesField(strField(nil, 1, name), 9, h)
}

// payload wraps metrics in ScopeMetrics, ResourceMetrics (with resource
// attributes) and MetricsData; the resource comes after its scopes, which
// protobuf allows.
func payload(resAttrs [][]byte, metrics ...[]byte) []byte {
	scope := bytesField(nil, 1, strField(nil, 1, "kgo"))
	for _, m := range metrics {
		scope = bytesField(scope, 2, m)
	}
	var res []byte
	for _, a := range resAttrs {
		res = bytesField(res, 1, a)
	}
	rm := bytesField(nil, 2, scope)
	rm = bytesField(rm, 1, res)
	return bytesField(nil, 1, rm)
}

func TestDecode(t *testing.T) {
	p := payload([][]byte{kv("group_id", "g"), kv("node_id", "resource")},
		gaugeMetric("org.apache.kafka.producer.node.request.latency.avg", numberPoint(1.5, false, kvInt("node_id", 1))),
		sumMetric("org.apache.kafka.producer.connection.creation.total", true, numberPoint(3, true)),
		histogramMetric("h", 7, 2.5),
		gaugeMetric("no.value", fixed64Field(nil, 3, 1)),
	)
	got, err := Decode(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{
		{Name: "org.apache.kafka.producer.node.request.latency.avg", Kind: Gauge, Value: 1.5, Attrs: []Attr{{"group_id", "g"}, {"node_id", "1"}}},
		{Name: "org.apache.kafka.producer.connection.creation.total", Kind: Sum, Delta: true, Monotonic: true, Value: 3, Attrs: []Attr{{"group_id", "g"}, {"node_id", "resource"}}},
		{Name: "h.count", Kind: Sum, Delta: true, Monotonic: true, Value: 7, Attrs: []Attr{{"group_id", "g"}, {"node_id", "1"}}},
		{Name: "h.sum", Kind: Sum, Delta: true, Value: 2.5, Attrs: []Attr{{"group_id", "g"}, {"node_id", "1"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode:\n got %+v\nwant %+v", got, want)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := payload(nil, gaugeMetric("a", numberPoint(1, false)))
	for name, b := range map[string][]byte{
		"truncated":        good[:len(good)-3],
		"group wire type":  {1<<3 | 3},
		"length past end":  {1<<3 | 2, 50, 1},
		"metric no name":   payload(nil, bytesField(nil, 5, bytesField(nil, 1, numberPoint(1, false)))),
		"value wrong type": payload(nil, gaugeMetric("a", varintField(nil, 4, 1))),
		"field zero":       {0, 0},
	} {
		if _, err := Decode(b); !errors.Is(err, errMalformed) {
			t.Errorf("%s: err %v, want malformed", name, err)
		}
	}
	// Unknown fields are skipped, as protobuf requires.
	withUnknown := append(varintField(nil, 9, 5), good...)
	if pts, err := Decode(withUnknown); err != nil || len(pts) != 1 {
		t.Fatalf("unknown field: %v %v", pts, err)
	}
}

// Nesting beyond the bound is refused rather than recursed into.
func TestDecodeDeepNesting(t *testing.T) {
	v := strField(nil, 1, "leaf")
	for range 50 {
		v = bytesField(nil, 5, bytesField(nil, 1, v)) // ArrayValue{values: [v]}
	}
	attr := bytesField(strField(nil, 1, "deep"), 2, v)
	if _, err := Decode(payload([][]byte{attr}, gaugeMetric("a", numberPoint(1, false)))); !errors.Is(err, errMalformed) {
		t.Fatalf("err %v", err)
	}
}

var inst = [16]byte{1, 2, 3}

func newTestRegistry(cfg Config) *Registry {
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.Metrics == nil {
		cfg.Metrics = []string{"*"}
	}
	return New(cfg)
}

func TestRegistryKafkaChecks(t *testing.T) {
	r := newTestRegistry(Config{MaxBytes: 1000})
	t0 := time.Unix(1000, 0)
	sw := Software{"kgo", "1.22"}
	sub, err := r.Subscribe(inst, Client{ID: "c", Software: sw}, t0)
	if err != nil || sub.ClientInstanceID != inst || !reflect.DeepEqual(sub.Metrics, []string{""}) || sub.Interval != time.Second {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	if _, err := r.Subscribe(inst, Client{ID: "c", Software: sw}, t0.Add(time.Millisecond)); err != kerr.ThrottlingQuotaExceeded {
		t.Fatalf("second get within the interval: %v", err)
	}
	p := payload(nil, gaugeMetric("g", numberPoint(4, false)))
	check := func(at time.Duration, subID int32, term bool, codec int8, body []byte, want error) {
		t.Helper()
		if err := r.Push(inst, subID, term, codec, body, Client{ID: "c", Software: sw}, t0.Add(at)); err != want {
			t.Fatalf("push at %v: %v, want %v", at, err, want)
		}
	}
	check(10*time.Millisecond, sub.ID, false, 0, p, nil) // first push after a get: at once
	check(20*time.Millisecond, sub.ID, false, 0, p, kerr.ThrottlingQuotaExceeded)
	check(1100*time.Millisecond, sub.ID+1, false, 0, p, kerr.UnknownSubscriptionID)
	// After UNKNOWN_SUBSCRIPTION_ID a get is answered at once.
	if _, err := r.Subscribe(inst, Client{ID: "c", Software: sw}, t0.Add(1101*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	check(1200*time.Millisecond, sub.ID, false, 0, make([]byte, 1001), kerr.TelemetryTooLarge)
	check(2300*time.Millisecond, sub.ID, false, 7, p, kerr.UnsupportedCompressionType)
	check(3400*time.Millisecond, sub.ID, false, 0, []byte{0xff}, kerr.InvalidRecord)
	gz, err := records.Compress(records.CodecGzip, p)
	if err != nil {
		t.Fatal(err)
	}
	check(4500*time.Millisecond, sub.ID, false, int8(records.CodecGzip), gz, nil)
	check(4600*time.Millisecond, sub.ID, true, 0, p, nil) // terminating: not throttled
	check(4700*time.Millisecond, sub.ID, true, 0, p, kerr.InvalidRequest)
	if err := r.Push([16]byte{}, sub.ID, false, 0, p, Client{ID: "c", Software: sw}, t0); err != kerr.InvalidRequest {
		t.Fatalf("zero instance: %v", err)
	}
	insts, pushes := r.Snapshot(t0.Add(4800 * time.Millisecond))
	if len(insts) != 1 || insts[0].ClientID != "c" || insts[0].Software != sw || !insts[0].Terminating || len(insts[0].Series) != 1 || insts[0].Series[0].Value != 4 {
		t.Fatalf("snapshot %+v", insts)
	}
	if pushes["ok"] != 3 || pushes["THROTTLING_QUOTA_EXCEEDED"] != 1 || pushes["INVALID_REQUEST"] != 2 {
		t.Fatalf("pushes %v", pushes)
	}
	// A terminated instance goes one interval later.
	if insts, _ := r.Snapshot(t0.Add(6 * time.Second)); len(insts) != 0 {
		t.Fatalf("terminated instance kept: %+v", insts)
	}
}

// Delta sums add up to the total; cumulative sums and gauges replace.
func TestRegistryAccumulates(t *testing.T) {
	r := newTestRegistry(Config{})
	t0 := time.Unix(1000, 0)
	sub, _ := r.Subscribe(inst, Client{ID: "c"}, t0)
	for i, v := range []float64{5, 7} {
		p := payload(nil,
			sumMetric("delta", true, numberPoint(v, true)),
			sumMetric("cumulative", false, numberPoint(v, true)),
			gaugeMetric("gauge", numberPoint(v, false)))
		if err := r.Push(inst, sub.ID, false, 0, p, Client{ID: "c"}, t0.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	insts, _ := r.Snapshot(t0.Add(2 * time.Second))
	got := map[string]float64{}
	for _, s := range insts[0].Series {
		got[s.Name] = s.Value
	}
	if want := map[string]float64{"delta": 12, "cumulative": 7, "gauge": 7}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// Memory stays bounded: series past MaxSeries are counted and dropped,
// the least recently seen instance makes room, silent ones expire.
func TestRegistryBounds(t *testing.T) {
	r := newTestRegistry(Config{MaxSeries: 3, MaxInstances: 2})
	t0 := time.Unix(1000, 0)
	sub, _ := r.Subscribe(inst, Client{ID: "c"}, t0)
	var ms [][]byte
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ms = append(ms, gaugeMetric(n, numberPoint(1, false)))
	}
	if err := r.Push(inst, sub.ID, false, 0, payload(nil, ms...), Client{ID: "c"}, t0); err != nil {
		t.Fatal(err)
	}
	insts, _ := r.Snapshot(t0)
	if len(insts[0].Series) != 3 || insts[0].Dropped != 2 {
		t.Fatalf("series %d dropped %d", len(insts[0].Series), insts[0].Dropped)
	}
	r.Subscribe([16]byte{2}, Client{ID: "d"}, t0.Add(time.Second))
	r.Subscribe([16]byte{3}, Client{ID: "e"}, t0.Add(2*time.Second))
	insts, _ = r.Snapshot(t0.Add(2 * time.Second))
	if len(insts) != 2 || insts[0].ClientID != "d" || insts[1].ClientID != "e" {
		t.Fatalf("after eviction: %+v", insts)
	}
	if insts, _ := r.Snapshot(t0.Add(10 * time.Second)); len(insts) != 0 {
		t.Fatalf("silent instances kept: %d", len(insts))
	}
}

// No prefixes means no client is asked for anything; a zero instance ID
// gets a fresh one; the subscription ID survives a new registry (a broker
// restart) for the same configuration and instance.
func TestRegistrySubscriptions(t *testing.T) {
	off := New(Config{})
	sub, err := off.Subscribe([16]byte{}, Client{ID: "c"}, time.Now())
	if err != nil || len(sub.Metrics) != 0 || sub.Metrics == nil || sub.ClientInstanceID == ([16]byte{}) {
		t.Fatalf("off: %+v %v", sub, err)
	}
	some := New(Config{Metrics: []string{"org.apache.kafka.producer."}})
	s1, _ := some.Subscribe(inst, Client{ID: "c"}, time.Now())
	s2, _ := New(Config{Metrics: []string{"org.apache.kafka.producer."}}).Subscribe(inst, Client{ID: "c"}, time.Now())
	if !reflect.DeepEqual(s1.Metrics, []string{"org.apache.kafka.producer."}) || s1.ID != s2.ID {
		t.Fatalf("%+v %+v", s1, s2)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(payload([][]byte{kv("group_id", "g")},
		gaugeMetric("g", numberPoint(1.5, false, kvInt("node_id", 1))),
		sumMetric("s", true, numberPoint(3, true)),
		histogramMetric("h", 7, 2.5)))
	seeds, _ := filepath.Glob("testdata/*.pb")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pts, err := Decode(b)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error not wrapped: %v", err)
			}
			return
		}
		if len(pts) > maxPoints {
			t.Fatalf("%d points", len(pts))
		}
		for _, p := range pts {
			if p.Name == "" || len(p.Attrs) > 2*maxAttrs {
				t.Fatalf("point %+v", p)
			}
		}
	})
}

// A compressed push that inflates past four times telemetry.max.bytes is
// refused as INVALID_RECORD without being inflated further, and keeps
// nothing.
func TestRegistryCompressionBomb(t *testing.T) {
	r := newTestRegistry(Config{MaxBytes: 64 << 10})
	t0 := time.Unix(1000, 0)
	sub, _ := r.Subscribe(inst, Client{ID: "c"}, t0)
	bomb, err := records.Compress(records.CodecZstd, make([]byte, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb of %d bytes is over the push limit itself", len(bomb))
	}
	if err := r.Push(inst, sub.ID, false, int8(records.CodecZstd), bomb, Client{ID: "c"}, t0.Add(time.Millisecond)); err != kerr.InvalidRecord {
		t.Fatalf("bomb: %v, want INVALID_RECORD", err)
	}
	if insts, _ := r.Snapshot(t0); len(insts[0].Series) != 0 {
		t.Fatalf("series kept from a refused push: %+v", insts[0].Series)
	}
}

// A push of points without values (as much as the 4 MiB a decompressed
// push may hold) is read without allocating per point: the decoder walks
// the points one at a time instead of collecting them, so what it builds
// is bounded by maxPoints whatever the points hold. It once collected
// every point's bytes first (2 M slice headers, some 250 MB).
func TestDecodeEmptyPointsBounded(t *testing.T) {
	empty := bytesField(nil, 1, nil) // one empty NumberDataPoint
	g := bytes.Repeat(empty, 2<<20)
	metric := bytesField(strField(nil, 1, "m"), 5, g)
	sum := bytesField(strField(nil, 1, "s"), 7, varintField(g, 2, 1))
	p := payload([][]byte{kv("client", "c")}, metric, sum, gaugeMetric("v", numberPoint(1, false)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pts, err := Decode(p)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 1 || pts[0].Name != "v" {
		t.Fatalf("points: %+v", pts)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("decoding %d bytes of empty points allocated %d bytes", len(p), n)
	}

	// Valued points stop at maxPoints, without reading the rest first.
	many := make([][]byte, maxPoints+1)
	for i := range many {
		many[i] = numberPoint(1, false)
	}
	if _, err := Decode(payload(nil, gaugeMetric("x", many...))); !errors.Is(err, errMalformed) {
		t.Fatalf("%d points: %v", maxPoints+1, err)
	}
}

// Rules: a client gets the union of every matching rule's metrics at the
// shortest of their intervals; one no rule matches gets Config's.
func TestRules(t *testing.T) {
	r := New(Config{Metrics: []string{"*"}, Interval: time.Minute})
	r.SetRules([]Rule{
		{Name: "a", Metrics: []string{"p."}, Interval: 5 * time.Second, Match: map[string]*regexp.Regexp{"client_id": regexp.MustCompile(`^(?:app.*)$`)}},
		{Name: "b", Metrics: []string{"q.", "p."}, Interval: 2 * time.Second, Match: map[string]*regexp.Regexp{"client_software_name": regexp.MustCompile(`^(?:kgo)$`)}},
		{Name: "c", Metrics: []string{"r."}, Interval: time.Second, Match: map[string]*regexp.Regexp{"client_id": regexp.MustCompile(`^(?:x)$`)}},
	})
	now := time.Now()
	sub, err := r.Subscribe([16]byte{}, Client{ID: "app1", Software: Software{Name: "kgo"}}, now)
	if err != nil || !slices.Equal(sub.Metrics, []string{"p.", "q."}) || sub.Interval != 2*time.Second {
		t.Fatalf("both match: %+v %v", sub, err)
	}
	sub, _ = r.Subscribe([16]byte{}, Client{ID: "app1", Software: Software{Name: "librdkafka"}}, now)
	if !slices.Equal(sub.Metrics, []string{"p."}) || sub.Interval != 5*time.Second {
		t.Fatalf("one matches: %+v", sub)
	}
	sub, _ = r.Subscribe([16]byte{}, Client{ID: "zzz"}, now)
	if !slices.Equal(sub.Metrics, []string{""}) || sub.Interval != time.Minute {
		t.Fatalf("none matches: %+v", sub)
	}
}

package quota

import (
	"errors"
	"testing"
	"time"
)

func s(v string) *string { return &v }

func ent(t *testing.T, parts ...Part) Entity {
	t.Helper()
	e, err := NewEntity(parts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Each level of Kafka's precedence wins over every level below it, and the
// sensor tags say who shares the quota.
func TestResolvePrecedence(t *testing.T) {
	levels := []struct {
		parts      []Part
		tagU, tagC string
	}{
		{[]Part{{TypeUser, s("alice")}, {TypeClient, s("app")}}, "alice", "app"},
		{[]Part{{TypeUser, s("alice")}, {TypeClient, nil}}, "alice", "app"},
		{[]Part{{TypeUser, s("alice")}}, "alice", ""},
		{[]Part{{TypeUser, nil}, {TypeClient, s("app")}}, "alice", "app"},
		{[]Part{{TypeUser, nil}, {TypeClient, nil}}, "alice", "app"},
		{[]Part{{TypeUser, nil}}, "alice", ""},
		{[]Part{{TypeClient, s("app")}}, "", "app"},
		{[]Part{{TypeClient, nil}}, "", "app"},
	}
	// With levels i.. set, level i wins.
	for i := range levels {
		var entries []Entry
		for j := i; j < len(levels); j++ {
			entries = append(entries, Entry{Entity: ent(t, levels[j].parts...), Values: map[string]float64{ProducerByteRate: float64(1000 + j)}})
		}
		// Noise that must never match.
		entries = append(entries,
			Entry{Entity: ent(t, Part{TypeUser, s("bob")}), Values: map[string]float64{ProducerByteRate: 1}},
			Entry{Entity: ent(t, Part{TypeClient, s("other")}), Values: map[string]float64{ProducerByteRate: 2}},
			Entry{Entity: ent(t, Part{TypeUser, s("alice")}, Part{TypeClient, s("other")}), Values: map[string]float64{ProducerByteRate: 3}},
		)
		set := NewSet(entries, 1)
		r := set.Resolve(ProducerByteRate, "alice", "app")
		if r.Limit != float64(1000+i) || r.User != levels[i].tagU || r.Client != levels[i].tagC {
			t.Errorf("levels %d..: got %+v, want limit %d tags %q/%q", i, r, 1000+i, levels[i].tagU, levels[i].tagC)
		}
		// A key set only lower down falls through to that level.
		if r := set.Resolve(ConsumerByteRate, "alice", "app"); r.Limit != 0 {
			t.Errorf("levels %d..: consumer quota %+v, want none", i, r)
		}
	}
	// A level without the key does not stop the search.
	set := NewSet([]Entry{
		{Entity: ent(t, Part{TypeUser, s("alice")}), Values: map[string]float64{ConsumerByteRate: 5}},
		{Entity: ent(t, Part{TypeClient, nil}), Values: map[string]float64{ProducerByteRate: 7}},
	}, 1)
	if r := set.Resolve(ProducerByteRate, "alice", "x"); r.Limit != 7 || r.User != "" || r.Client != "x" {
		t.Fatalf("fall through: %+v", r)
	}
}

func TestValidation(t *testing.T) {
	bad := []struct {
		parts []Part
		key   string
		val   float64
		msg   string
	}{
		{nil, "", 0, "Invalid empty client quota entity"},
		{[]Part{{TypeUser, s("a")}, {TypeUser, s("b")}}, "", 0, "Invalid empty client quota entity, duplicate entity entry user"},
		{[]Part{{"group", s("a")}}, "", 0, "Unhandled client quota entity type: group"},
		{[]Part{{TypeUser, s("")}}, "", 0, "Empty user not supported"},
		{[]Part{{TypeIP, s("1.2.3.4")}, {TypeUser, s("a")}}, "", 0, "Invalid quota entity combination, IP entity should not be combined with User or ClientId"},
		{[]Part{{TypeIP, s("not-an-ip")}}, "", 0, "not-an-ip is not a valid IP or resolvable host."},
		{[]Part{{TypeUser, s("a")}}, "bogus", 1, "Invalid configuration key bogus"},
		{[]Part{{TypeUser, s("a")}}, ConnectionCreationRate, 1, "Invalid configuration key connection_creation_rate"},
		{[]Part{{TypeIP, nil}}, ProducerByteRate, 1, "Invalid configuration key producer_byte_rate"},
		{[]Part{{TypeUser, s("a")}}, ProducerByteRate, 0, "Quota producer_byte_rate must be greater than 0"},
		{[]Part{{TypeUser, s("a")}}, ProducerByteRate, 1.5, "Integer value expected for producer_byte_rate but got 1.5"},
	}
	for _, c := range bad {
		e, err := NewEntity(c.parts)
		if err == nil {
			err = ValidateValue(e, c.key, c.val)
		}
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Msg != c.msg {
			t.Errorf("%v %s=%v: got %v, want %q", c.parts, c.key, c.val, err, c.msg)
		}
	}
	e := ent(t, Part{TypeUser, s("a")}, Part{TypeClient, nil})
	for _, k := range []string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate} {
		if err := ValidateValue(e, k, 2); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if err := ValidateValue(e, RequestPercentage, 0.5); err != nil {
		t.Errorf("fractional request_percentage: %v", err)
	}
}

func TestDescribeFilter(t *testing.T) {
	set := NewSet([]Entry{
		{Entity: ent(t, Part{TypeUser, s("alice")}), Values: map[string]float64{ProducerByteRate: 1}},
		{Entity: ent(t, Part{TypeUser, nil}), Values: map[string]float64{ProducerByteRate: 2}},
		{Entity: ent(t, Part{TypeUser, s("alice")}, Part{TypeClient, s("app")}), Values: map[string]float64{ProducerByteRate: 3}},
		{Entity: ent(t, Part{TypeClient, nil}), Values: map[string]float64{ProducerByteRate: 4}},
	}, 1)
	got := func(f []FilterPart, strict bool) []string {
		es, err := set.Describe(f, strict)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Entity.String())
		}
		return out
	}
	check := func(name string, have []string, want ...string) {
		t.Helper()
		if len(have) != len(want) {
			t.Errorf("%s: %v, want %v", name, have, want)
			return
		}
		for i := range have {
			if have[i] != want[i] {
				t.Errorf("%s: %v, want %v", name, have, want)
			}
		}
	}
	check("all", got(nil, false), "client-id=<default>", "client-id=app,user=alice", "user=<default>", "user=alice")
	check("exact alice", got([]FilterPart{{Type: TypeUser, Match: MatchExact, Name: s("alice")}}, false), "client-id=app,user=alice", "user=alice")
	check("exact alice strict", got([]FilterPart{{Type: TypeUser, Match: MatchExact, Name: s("alice")}}, true), "user=alice")
	check("default user", got([]FilterPart{{Type: TypeUser, Match: MatchDefault}}, false), "user=<default>")
	check("any user strict", got([]FilterPart{{Type: TypeUser, Match: MatchSpecified}}, true), "user=<default>", "user=alice")
	check("empty strict", got(nil, true))
	for _, f := range [][]FilterPart{
		{{Type: TypeUser, Match: MatchDefault}, {Type: TypeUser, Match: MatchDefault}},
		{{Type: "group", Match: MatchDefault}},
		{{Type: TypeUser, Match: MatchExact}},
		{{Type: TypeUser, Match: 7}},
		{{Type: TypeIP, Match: MatchDefault}, {Type: TypeUser, Match: MatchDefault}},
	} {
		var inv *InvalidError
		if _, err := set.Describe(f, false); !errors.As(err, &inv) {
			t.Errorf("%v: %v, want an InvalidError", f, err)
		}
	}
}

// Kafka's numbers: 11 samples of 1 s, 1000 B/s. A fresh sensor counts at
// least 10 s of window, so 10 000 bytes fit and the next 2 000 are 20 %
// over: throttle 0.2 × 10 s.
func TestRateThrottle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRate(DefaultWindow, t0)
	if d := r.Record(10000, 1000, t0); d != 0 {
		t.Fatalf("within the bound: throttle %v", d)
	}
	if d := r.Record(2000, 1000, t0); d != 2*time.Second {
		t.Fatalf("20%% over a 10 s window: throttle %v, want 2s", d)
	}
	// Samples older than 11 windows are forgotten.
	later := t0.Add(12 * time.Second)
	if d := r.Record(1, 1000, later); d != 0 {
		t.Fatalf("after the window: throttle %v", d)
	}
	if got := r.Measure(later); got > 1 {
		t.Fatalf("rate after expiry %v", got)
	}
	// A steady 2× rate is throttled each second by about the excess.
	r = NewRate(Window{Samples: 3, Size: 100 * time.Millisecond}, t0)
	var last time.Duration
	for i := 1; i <= 10; i++ {
		last = r.Record(200, 1000, t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	if last <= 0 {
		t.Fatalf("2x the bound not throttled")
	}
}

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := NewBucket(Window{Samples: 2, Size: time.Second}) // burst 2 s × rate
	if d := b.Throttle(5, t0); d != 0 {
		t.Fatalf("full bucket throttles %v", d)
	}
	if d := b.Take(15, 5, t0); d != time.Second {
		t.Fatalf("5 tokens over at 5/s: %v, want 1s", d)
	}
	if d := b.Throttle(5, t0.Add(500*time.Millisecond)); d != 500*time.Millisecond {
		t.Fatalf("half refilled: %v", d)
	}
	if d := b.Throttle(5, t0.Add(time.Second)); d != 0 {
		t.Fatalf("refilled: %v", d)
	}
}

func TestFileRoundTrip(t *testing.T) {
	set := NewSet([]Entry{
		{Entity: ent(t, Part{TypeUser, s("alice")}, Part{TypeClient, nil}), Values: map[string]float64{ProducerByteRate: 1048576, RequestPercentage: 12.5}},
		{Entity: ent(t, Part{TypeIP, s("10.0.0.1")}), Values: map[string]float64{ConnectionCreationRate: 3}},
	}, 4)
	data := Encode(set)
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(Encode(got)) != string(data) {
		t.Fatalf("round trip differs")
	}
	for _, c := range []struct {
		data []byte
		want error
	}{
		{nil, ErrBadMagic},
		{[]byte("MKQUOTA\n\x01"), ErrTruncated},
		{append([]byte("MKQUOTA\n\x02"), data[9:]...), ErrBadVersion},
		{data[:len(data)-1], ErrTruncated},
		{append(append([]byte{}, data...), 'x'), ErrContent},
		{flip(data, len(data)-2), ErrChecksum},
	} {
		if _, err := Decode(c.data); !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.data, err, c.want)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 1
	return c
}

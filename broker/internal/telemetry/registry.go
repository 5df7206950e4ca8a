package telemetry

import (
	"crypto/rand"
	"encoding/base64"
	"hash/crc32"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/records"
)

// Config is the broker's subscription and the registry's bounds.
type Config struct {
	// Metrics are the metric name prefixes every client is asked for: ""
	// or "*" alone means all, none means no client pushes.
	Metrics []string
	// Interval is the push interval given to clients (Kafka's
	// client-metrics interval.ms; default 30 s here).
	Interval time.Duration
	// MaxBytes is Kafka's telemetry.max.bytes: the largest push accepted
	// (default 1 MiB).
	MaxBytes int32
	// MaxInstances and MaxSeries bound memory: the least recently seen
	// instance makes room for a new one, and series past MaxSeries of
	// one instance are dropped (defaults 4096 and 2000).
	MaxInstances int
	MaxSeries    int
}

// Software is what a connection said of its client in ApiVersions.
type Software struct{ Name, Version string }

// Client is what a subscription can match a client instance on besides
// its instance ID: Kafka's client_id, client_software_name/version and
// client_source_address/port.
type Client struct {
	ID                     string
	Software               Software
	SourceAddr, SourcePort string
}

// Rule is one operator-made subscription (a CLIENT_METRICS config
// resource): the metric prefixes and interval given to every client
// instance that all of Match's patterns match in full.
type Rule struct {
	Name     string
	Metrics  []string
	Interval time.Duration
	Match    map[string]*regexp.Regexp // by Kafka's match parameter name
}

func (ru *Rule) matches(id [16]byte, c Client) bool {
	for param, re := range ru.Match {
		var v string
		switch param {
		case "client_instance_id":
			v = FormatID(id)
		case "client_id":
			v = c.ID
		case "client_software_name":
			v = c.Software.Name
		case "client_software_version":
			v = c.Software.Version
		case "client_source_address":
			v = c.SourceAddr
		case "client_source_port":
			v = c.SourcePort
		default:
			return false
		}
		if !re.MatchString(v) {
			return false
		}
	}
	return true
}

// Registry is every client instance's subscription and pushed series.
type Registry struct {
	cfg     Config
	metrics []string // what GetTelemetrySubscriptions answers

	mu         sync.Mutex
	rules      []Rule
	gen        uint64 // moves with every SetRules: instances recompute theirs
	instances  map[[16]byte]*instance
	pushes     map[string]uint64 // by result: ok or the error's name
	lastExpire time.Time         // expire's last full pass
}

type instance struct {
	id           [16]byte
	subscription int32
	metrics      []string
	interval     time.Duration
	gen          uint64
	clientID     string
	software     Software
	lastGet      time.Time
	lastPush     time.Time
	terminating  bool
	lastErr      error
	series       map[string]*series
	dropped      uint64 // series not kept past MaxSeries
}

type series struct {
	name  string
	kind  Kind
	attrs []Attr
	value float64
}

// New returns a registry answering with cfg's subscription.
func New(cfg Config) *Registry {
	if cfg.Interval <= 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 20
	}
	if cfg.MaxInstances <= 0 {
		cfg.MaxInstances = 4096
	}
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = 2000
	}
	r := &Registry{cfg: cfg, instances: map[[16]byte]*instance{}, pushes: map[string]uint64{}}
	r.metrics = prefixes(cfg.Metrics)
	return r
}

// prefixes is a metrics list as GetTelemetrySubscriptions sends it: "*"
// (or "") anywhere means all, which KIP-714 spells as one empty prefix.
func prefixes(ms []string) []string {
	out := []string{}
	for _, m := range ms {
		if m == "*" || m == "" {
			return []string{""}
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// SetRules replaces the operator-made subscriptions. Every instance gets
// its subscription anew at its next request, so one pushing under the old
// one is told UNKNOWN_SUBSCRIPTION_ID and asks again, as in Kafka.
func (r *Registry) SetRules(rules []Rule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules = rules
	r.gen++
}

// subscribe sets in's subscription: the union of the metrics of every
// rule matching it, at the shortest of their intervals (Kafka's merge);
// with no rule matching, the broker's own subscription (Config), which is
// minikafka's default where Kafka asks for nothing. r.mu is held.
func (r *Registry) subscribe(in *instance, c Client) {
	in.gen = r.gen
	var metrics []string
	var interval time.Duration
	matched := false
	for i := range r.rules {
		ru := &r.rules[i]
		if !ru.matches(in.id, c) {
			continue
		}
		matched = true
		metrics = append(metrics, ru.Metrics...)
		if interval == 0 || ru.Interval < interval {
			interval = ru.Interval
		}
	}
	if !matched {
		in.metrics, in.interval = r.metrics, r.cfg.Interval
	} else {
		in.metrics, in.interval = prefixes(metrics), interval
	}
	in.subscription = subscriptionID(in.metrics, in.interval, in.id)
}

// Accepted are the compression types a push may use besides none, in
// Kafka's order of preference.
var Accepted = []int8{int8(records.CodecZstd), int8(records.CodecLZ4), int8(records.CodecGzip), int8(records.CodecSnappy)}

// Subscription is the answer to GetTelemetrySubscriptions.
type Subscription struct {
	ClientInstanceID [16]byte
	ID               int32
	Metrics          []string
	Interval         time.Duration
	MaxBytes         int32
}

// subscriptionID identifies what the instance was asked for; it is a
// function of the configuration and the instance, so a client that keeps
// pushing across a broker restart is still recognised, as in Kafka.
func subscriptionID(metrics []string, interval time.Duration, id [16]byte) int32 {
	h := crc32.NewIEEE()
	h.Write([]byte(strings.Join(metrics, "\x00")))
	h.Write([]byte(strconv.FormatInt(interval.Milliseconds(), 10)))
	h.Write(id[:])
	return int32(h.Sum32())
}

// Subscribe answers GetTelemetrySubscriptions. A zero id is given a new
// instance ID. A second request within the push interval is throttled
// unless the last push was refused for an outdated subscription or its
// compression, Kafka's rule.
func (r *Registry) Subscribe(id [16]byte, c Client, now time.Time) (Subscription, error) {
	if id == ([16]byte{}) {
		id = newInstanceID()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire(now)
	in := r.instance(id, c, now)
	last := in.lastGet
	if in.lastPush.After(last) {
		last = in.lastPush
	}
	if !last.IsZero() && now.Sub(last) < in.interval && in.lastErr != kerr.UnknownSubscriptionID && in.lastErr != kerr.UnsupportedCompressionType {
		return Subscription{}, kerr.ThrottlingQuotaExceeded
	}
	in.lastGet = now
	in.lastErr = nil
	return Subscription{ClientInstanceID: id, ID: in.subscription, Metrics: in.metrics, Interval: in.interval, MaxBytes: r.cfg.MaxBytes}, nil
}

// Push answers PushTelemetry: it checks the push as Kafka does, then
// decodes the payload and keeps its points.
func (r *Registry) Push(id [16]byte, subscription int32, terminating bool, compression int8, payload []byte, c Client, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == ([16]byte{}) {
		return r.count(kerr.InvalidRequest)
	}
	r.expire(now)
	in := r.instance(id, c, now)
	err := r.admit(in, subscription, terminating, compression, payload, now)
	if err == nil {
		if terminating {
			in.terminating = true
		}
		err = r.record(in, compression, payload)
	}
	in.lastErr = err
	return r.count(err)
}

func (r *Registry) admit(in *instance, subscription int32, terminating bool, compression int8, payload []byte, now time.Time) error {
	if in.terminating {
		return kerr.InvalidRequest // it already sent its last push
	}
	if subscription != in.subscription {
		return kerr.UnknownSubscriptionID
	}
	if !in.lastGet.After(in.lastPush) && now.Sub(in.lastPush) < in.interval && !terminating {
		return kerr.ThrottlingQuotaExceeded
	}
	in.lastPush = now
	if len(payload) > int(r.cfg.MaxBytes) {
		return kerr.TelemetryTooLarge
	}
	if compression != 0 && !slices.Contains(Accepted, compression) {
		return kerr.UnsupportedCompressionType
	}
	return nil
}

// record decodes payload into in's series. An undecodable payload is
// INVALID_RECORD and changes nothing.
func (r *Registry) record(in *instance, compression int8, payload []byte) error {
	if compression != 0 {
		var err error
		payload, err = records.Decompress(records.Codec(compression), payload, 4*int(r.cfg.MaxBytes))
		if err != nil {
			return kerr.InvalidRecord
		}
	}
	points, err := Decode(payload)
	if err != nil {
		return kerr.InvalidRecord
	}
	for i := range points {
		p := &points[i]
		key := seriesKey(p)
		s := in.series[key]
		if s == nil {
			if len(in.series) >= r.cfg.MaxSeries {
				in.dropped++
				continue
			}
			s = &series{name: p.Name, kind: p.Kind, attrs: p.Attrs}
			in.series[key] = s
		}
		if p.Kind == Sum && p.Delta {
			s.value += p.Value
		} else {
			s.value = p.Value
		}
	}
	return nil
}

func seriesKey(p *Point) string {
	var sb strings.Builder
	sb.WriteString(p.Name)
	for _, a := range p.Attrs {
		sb.WriteByte(0)
		sb.WriteString(a.Key)
		sb.WriteByte(0)
		sb.WriteString(a.Value)
	}
	return sb.String()
}

// instance returns id's instance, making it (and room for it) if new,
// with its subscription as the rules now give it.
func (r *Registry) instance(id [16]byte, c Client, now time.Time) *instance {
	in := r.instances[id]
	if in == nil {
		if len(r.instances) >= r.cfg.MaxInstances {
			r.evictOldest()
		}
		in = &instance{id: id, series: map[string]*series{}}
		r.instances[id] = in
		r.subscribe(in, c)
	} else if in.gen != r.gen {
		r.subscribe(in, c)
	}
	in.clientID = c.ID
	if c.Software.Name != "" {
		in.software = c.Software
	}
	return in
}

func (in *instance) lastSeen() time.Time {
	if in.lastPush.After(in.lastGet) {
		return in.lastPush
	}
	return in.lastGet
}

func (r *Registry) evictOldest() {
	var oldest *instance
	for _, in := range r.instances {
		if oldest == nil || in.lastSeen().Before(oldest.lastSeen()) {
			oldest = in
		}
	}
	if oldest != nil {
		delete(r.instances, oldest.id)
	}
}

// expire drops instances silent for three intervals and those that said
// goodbye one interval ago (their last values stay visible that long). A
// pass walks every instance, so pushes run one at most once a second.
func (r *Registry) expire(now time.Time) {
	if now.Sub(r.lastExpire) < time.Second && now.After(r.lastExpire) {
		return
	}
	r.lastExpire = now
	for id, in := range r.instances {
		age := now.Sub(in.lastSeen())
		if age > 3*in.interval || in.terminating && age > in.interval {
			delete(r.instances, id)
		}
	}
}

// count tallies a push's result; r.mu is held.
func (r *Registry) count(err error) error {
	name := "ok"
	if ke, ok := err.(*kerr.Error); ok {
		name = ke.Message
	} else if err != nil {
		name = "error"
	}
	r.pushes[name]++
	return err
}

// newInstanceID is a random version 4 UUID, never the zero or reserved
// IDs Kafka refuses.
func newInstanceID() [16]byte {
	var id [16]byte
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// FormatID renders an instance ID as Kafka prints a Uuid: URL-safe
// base64 without padding.
func FormatID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// Series is one kept series, for /metrics.
type Series struct {
	Name  string
	Kind  Kind
	Attrs []Attr
	Value float64
}

// InstanceStats is one client instance's identity and series.
type InstanceStats struct {
	ID          string
	ClientID    string
	Software    Software
	Terminating bool
	Dropped     uint64
	Series      []Series
}

// Snapshot returns every live instance's series, sorted by client ID,
// instance, series name and attributes; and the push counts by result.
func (r *Registry) Snapshot(now time.Time) ([]InstanceStats, map[string]uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastExpire = time.Time{} // a snapshot shows no expired instance
	r.expire(now)
	out := make([]InstanceStats, 0, len(r.instances))
	for _, in := range r.instances {
		st := InstanceStats{ID: FormatID(in.id), ClientID: in.clientID, Software: in.software, Terminating: in.terminating, Dropped: in.dropped}
		keys := make([]string, 0, len(in.series))
		for k := range in.series {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s := in.series[k]
			st.Series = append(st.Series, Series{Name: s.name, Kind: s.kind, Attrs: s.attrs, Value: s.value})
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b InstanceStats) int {
		if c := strings.Compare(a.ClientID, b.ClientID); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	pushes := make(map[string]uint64, len(r.pushes))
	for k, v := range r.pushes {
		pushes[k] = v
	}
	return out, pushes
}

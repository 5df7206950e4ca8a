package broker

// Client quotas (KIP-13, KIP-124, KIP-219, KIP-546, KIP-599), as Kafka's
// ClientQuotaManager, ClientRequestQuotaManager and
// ControllerMutationQuotaManager enforce them.
//
// The quotas (DescribeClientQuotas, AlterClientQuotas; package
// broker/internal/quota for the model, the precedence and the file) are an
// immutable quota.Set in an atomic pointer. With no quota set, a request
// costs one atomic load (quotaManager.on). With quotas, each network
// request:
//
//   - resolves, once per connection and quota-set version (connQuota, in
//     ConnInfo.Quota), the quota of its user (the SASL principal's name,
//     ANONYMOUS without SASL) and client ID for each key, and the sensor
//     shared by whoever the quota's entity covers;
//   - records the time its handler took as a percentage of one thread
//     against request_percentage (Kafka's request sensor; the throttle is
//     capped at one window, as Kafka's ClientRequestQuotaManager caps it);
//   - Produce records the request's size against producer_byte_rate;
//     Fetch the response's size against consumer_byte_rate. A throttled
//     Fetch (by either quota) is answered with no records (Kafka's
//     getThrottledResponse) and its bytes are taken back out of the fetch
//     sensor, as Kafka's handleFetchRequest does.
//   - CreateTopics, DeleteTopics and CreatePartitions take one token per
//     partition from the controller_mutation_rate bucket; for the versions
//     that know THROTTLING_QUOTA_EXCEEDED (v6+, v5+, v3+) a topic that finds
//     the bucket empty is refused with it (strict), older versions are
//     only throttled (permissive).
//
// The largest throttle goes into the response's throttle_time_ms and the
// connection is muted (not read) for that long (protocol ConnInfo.Mute).
// For versions where the client throttles itself (kmsg's ThrottleResponse
// "after response", KIP-219) the answer goes out at once; for older ones it
// is held back for the throttle time, as Kafka held them.
//
// A fetch's max_bytes is cut to what the quota allows over the window
// (Kafka's getMaxValueInQuotaWindow).
//
// connection_creation_rate (ip entities, KIP-612) is checked as a
// connection is accepted (ConnectionThrottle, protocol.Config.ConnThrottle):
// each new connection is recorded in its IP's windowed rate, and one that
// takes the rate over the quota is not served and closed after the
// throttle time, as Kafka's acceptor delays closing it.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

// quotaFile is the quota file's name in DataDir.
const quotaFile = "client_quotas"

type quotaKind uint8

const (
	qProduce quotaKind = iota
	qFetch
	qRequest
	qMutation
	numQuotaKinds
)

var quotaKindKey = [numQuotaKinds]string{quota.ProducerByteRate, quota.ConsumerByteRate, quota.RequestPercentage, quota.ControllerMutationRate}

type sensorKey struct {
	kind         quotaKind
	user, client string
}

// sensor measures one entity group's use of one quota.
type sensor struct {
	rate   *quota.Rate   // byte and request quotas
	bucket *quota.Bucket // controller mutations
	// last is the unix-nano time of the last recording, for expiry.
	last atomic.Int64
}

type quotaManager struct {
	fs     vfs.FS
	file   string
	window quota.Window

	set atomic.Pointer[quota.Set]
	on  atomic.Bool // the set holds any quota

	alterMu sync.Mutex // one alter (and file write) at a time

	sensorMu sync.Mutex
	sensors  map[sensorKey]*sensor
	// connRates are the per-IP connection creation rates, under sensorMu.
	connRates map[string]*sensor
}

// openQuotas loads DataDir/client_quotas; a damaged file stops the start.
func openQuotas(fsys vfs.FS, dir string, w quota.Window) (*quotaManager, error) {
	m := &quotaManager{fs: fsys, file: path.Join(dir, quotaFile), window: w.Normalize(), sensors: map[sensorKey]*sensor{}, connRates: map[string]*sensor{}}
	data, err := readFile(fsys, m.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m.set.Store(quota.NewSet(nil, 1))
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("broker: reading client quotas %s: %w", m.file, err)
	}
	s, err := quota.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("broker: client quota file %s is damaged: %w", m.file, err)
	}
	m.set.Store(s)
	m.on.Store(!s.Empty())
	return m, nil
}

// alter applies changes (validated) and makes them durable before
// returning.
func (m *quotaManager) alter(changes map[string]quota.Change) error {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	next := m.set.Load().With(changes)
	if err := vfs.WriteFileAtomic(m.fs, m.file, quota.Encode(next), 0o644); err != nil {
		return fmt.Errorf("broker: writing client quotas: %w", err)
	}
	m.set.Store(next)
	m.on.Store(!next.Empty())
	return nil
}

func (m *quotaManager) sensor(k sensorKey, now time.Time) *sensor {
	m.sensorMu.Lock()
	defer m.sensorMu.Unlock()
	s := m.sensors[k]
	if s == nil {
		s = &sensor{}
		if k.kind == qMutation {
			s.bucket = quota.NewBucket(m.window)
		} else {
			s.rate = quota.NewRate(m.window, now)
		}
		m.sensors[k] = s
		// Kafka expires sensors idle for an hour; sweep when the table
		// grows so one-off client IDs do not pile up.
		if len(m.sensors)%1024 == 0 {
			cut := now.Add(-time.Hour).UnixNano()
			for kk, ss := range m.sensors {
				if ss != s && ss.last.Load() < cut {
					delete(m.sensors, kk)
				}
			}
		}
	}
	return s
}

// connQuota is one connection's resolved quotas (ConnInfo.Quota).
type connQuota struct {
	version      uint64
	user, client string
	limit        [numQuotaKinds]float64
	sensors      [numQuotaKinds]*sensor
	// mutationThrottle is set by the handler of a topic mutation for the
	// request being served (Serve calls of a connection never overlap).
	mutationThrottle time.Duration
}

// quotaUser is the name quotas know the connection's principal by.
func (b *Broker) quotaUser(req *protocol.Request) string { return b.principalName(req) }

func (b *Broker) connQuota(req *protocol.Request, now time.Time) *connQuota {
	set := b.quotas.set.Load()
	user := b.quotaUser(req)
	client := ""
	if req.ClientID != nil {
		client = *req.ClientID
	}
	cq, _ := req.Conn.Quota.(*connQuota)
	if cq != nil && cq.version == set.Version && cq.user == user && cq.client == client {
		return cq
	}
	cq = &connQuota{version: set.Version, user: user, client: client}
	for k := range numQuotaKinds {
		r := set.Resolve(quotaKindKey[k], user, client)
		if r.Limit > 0 {
			cq.limit[k] = r.Limit
			cq.sensors[k] = b.quotas.sensor(sensorKey{k, r.User, r.Client}, now)
		}
	}
	req.Conn.Quota = cq
	return cq
}

// exemptFromRequestQuota are requests Kafka never throttles by time: the
// ones a client needs to learn it is throttled or to authenticate.
func exemptFromRequestQuota(key int16) bool {
	return key == 17 || key == 18 || key == 36
}

// serveQuota serves req under its connection's quotas (see the file doc).
func (b *Broker) serveQuota(ctx context.Context, req *protocol.Request, a *api) protocol.Reply {
	start := b.now()
	cq := b.connQuota(req, start)
	cq.mutationThrottle = 0
	if fr, ok := req.Body.(*kmsg.FetchRequest); ok && cq.sensors[qFetch] != nil {
		// Kafka's getMaxValueInQuotaWindow: a fetch asks for at most
		// what the quota allows over the window (KIP-74 still returns
		// one batch if it is larger).
		w := b.quotas.window
		if most := cq.limit[qFetch] * float64(w.Samples-1) * w.Size.Seconds(); most < float64(fr.MaxBytes) {
			fr.MaxBytes = int32(max(most, 1))
		}
	}
	reply := b.handle(ctx, req, a)
	now := b.now()
	var reqThrottle time.Duration
	if s := cq.sensors[qRequest]; s != nil && !exemptFromRequestQuota(req.Key) {
		// Percent of one thread over the window: nanoseconds × 100 / 1e9
		// per second of the window (Kafka's nanosToPercentage).
		pct := float64(now.Sub(start).Nanoseconds()) * 100 / 1e9
		reqThrottle = min(s.rate.Record(pct, cq.limit[qRequest], now), b.quotas.window.Size)
		s.last.Store(now.UnixNano())
	}
	throttle := max(reqThrottle, cq.mutationThrottle)
	switch req.Key {
	case 0:
		if s := cq.sensors[qProduce]; s != nil {
			throttle = max(throttle, s.rate.Record(float64(req.Size), cq.limit[qProduce], now))
			s.last.Store(now.UnixNano())
		}
	case 1:
		if s := cq.sensors[qFetch]; s != nil {
			return b.throttleFetch(req, reply, cq, s, throttle)
		}
	}
	return b.applyThrottle(req, reply, throttle)
}

// applyThrottle puts d into reply's response, holds the answer back for
// clients that do not throttle themselves, and mutes the connection.
func (b *Broker) applyThrottle(req *protocol.Request, reply protocol.Reply, d time.Duration) protocol.Reply {
	if d <= 0 || reply.Err != nil {
		return reply
	}
	b.quotaThrottles.Add(1)
	req.Conn.Mute(d)
	set := func(r kmsg.Response) (hold bool) {
		tr, ok := r.(kmsg.ThrottleResponse)
		if !ok {
			return false
		}
		cur, after := tr.Throttle()
		if st, ok := r.(kmsg.SetThrottleResponse); ok {
			st.SetThrottle(max(cur, int32(min(d.Milliseconds(), 1<<31-1))))
		}
		return !after
	}
	switch {
	case reply.Response != nil:
		if set(reply.Response) {
			resp := reply.Response
			reply.Response = nil
			reply.Wait = func() (kmsg.Response, error) { time.Sleep(d); return resp, nil }
		}
	case reply.Wait != nil:
		w := reply.Wait
		reply.Wait = func() (kmsg.Response, error) {
			r, err := w()
			if r != nil && set(r) {
				time.Sleep(d)
			}
			return r, err
		}
	}
	return reply
}

// throttleFetch records a fetch's response size once it is known.
func (b *Broker) throttleFetch(req *protocol.Request, reply protocol.Reply, cq *connQuota, s *sensor, reqThrottle time.Duration) protocol.Reply {
	if reply.Err != nil {
		return reply
	}
	incremental := false
	if fr, ok := req.Body.(*kmsg.FetchRequest); ok {
		incremental = fr.SessionEpoch > 0
	}
	finish := func(r kmsg.Response) (kmsg.Response, time.Duration) {
		now := b.now()
		size := float64(fetchResponseSize(r))
		bw := s.rate.Record(size, cq.limit[qFetch], now)
		s.last.Store(now.UnixNano())
		d := max(bw, reqThrottle)
		if d <= 0 {
			return r, 0
		}
		// Kafka's handleFetchRequest: a throttled fetch (by either
		// quota) is answered empty (getThrottledResponse), so its bytes
		// are taken back out of the fetch sensor; the client fetches the
		// same offsets after the throttle.
		s.rate.Unrecord(size)
		return throttledFetchResponse(r, incremental), d
	}
	if reply.Response != nil {
		var d time.Duration
		reply.Response, d = finish(reply.Response)
		return b.applyThrottle(req, reply, d)
	}
	if reply.Wait == nil {
		return reply
	}
	w := reply.Wait
	reply.Wait = func() (kmsg.Response, error) {
		r, err := w()
		if r == nil || err != nil {
			return r, err
		}
		r, d := finish(r)
		inner := b.applyThrottle(req, protocol.Reply{Response: r}, d)
		if inner.Wait != nil {
			return inner.Wait()
		}
		return inner.Response, nil
	}
	return reply
}

// fetchResponseSize is what Kafka's fetch sensor counts: the response's
// size (the body of a response streamed from files).
func fetchResponseSize(r kmsg.Response) int64 {
	switch t := r.(type) {
	case protocol.BodyWriter:
		return t.BodyLen()
	case *kmsg.FetchResponse:
		var n int64
		for i := range t.Topics {
			for j := range t.Topics[i].Partitions {
				n += int64(len(t.Topics[i].Partitions[j].RecordBatches)) + 40
			}
		}
		return n
	}
	return 0
}

// throttledFetchResponse replaces a fetch answer with Kafka's throttled
// one: no error, no partitions, the session kept for an incremental fetch.
func throttledFetchResponse(r kmsg.Response, incremental bool) kmsg.Response {
	var old *kmsg.FetchResponse
	switch t := r.(type) {
	case *fetchBody:
		old = t.FetchResponse
	case *kmsg.FetchResponse:
		old = t
	default:
		return r
	}
	n := kmsg.NewPtrFetchResponse()
	n.Version = old.Version
	if incremental {
		n.SessionID = old.SessionID
	}
	if rl, ok := r.(protocol.Releaser); ok {
		rl.Release()
	}
	return n
}

// SetThrottle also patches the encoded fields (throttle_time_ms comes
// first), since the quota code measures the body before it knows the
// throttle.
func (fb *fetchBody) SetThrottle(ms int32) {
	fb.FetchResponse.ThrottleMillis = ms
	if len(fb.meta) >= 4 {
		binary.BigEndian.PutUint32(fb.meta, uint32(ms))
	}
}

// errThrottlingQuota is Kafka's ThrottlingQuotaExceededException message.
var errThrottlingQuota = errors.New("The throttling quota has been exceeded.")

// mutationAllowed takes n partitions' worth of controller_mutation_rate
// tokens for req (Kafka's ControllerMutationQuota): strict (the versions
// that know THROTTLING_QUOTA_EXCEEDED) refuses when the bucket is already
// empty, permissive only throttles. The throttle goes into the answer
// through connQuota.mutationThrottle.
func (b *Broker) mutationAllowed(req *protocol.Request, n int32, strict bool) bool {
	if !b.quotas.on.Load() || req.Conn == nil {
		return true
	}
	cq, _ := req.Conn.Quota.(*connQuota)
	if cq == nil || cq.sensors[qMutation] == nil || cq.version != b.quotas.set.Load().Version {
		return true
	}
	s, rate, now := cq.sensors[qMutation], cq.limit[qMutation], b.now()
	s.last.Store(now.UnixNano())
	if strict {
		if d := s.bucket.Throttle(rate, now); d > 0 {
			cq.mutationThrottle = max(cq.mutationThrottle, d)
			return false
		}
	}
	cq.mutationThrottle = max(cq.mutationThrottle, s.bucket.Take(float64(n), rate, now))
	return true
}

// ConnectionThrottle records a new connection from remote against its
// IP's connection_creation_rate quota and returns how long to hold it
// before closing it unserved, 0 to serve it.
func (b *Broker) ConnectionThrottle(remote net.Addr) time.Duration {
	m := b.quotas
	if !m.on.Load() {
		return 0
	}
	ip := remoteIP(remote)
	limit := m.set.Load().ResolveIP(ip)
	if limit <= 0 {
		return 0
	}
	now := b.now()
	m.sensorMu.Lock()
	s := m.connRates[ip]
	if s == nil {
		s = &sensor{rate: quota.NewRate(m.window, now)}
		m.connRates[ip] = s
		if len(m.connRates)%1024 == 0 {
			cut := now.Add(-time.Hour).UnixNano()
			for k, ss := range m.connRates {
				if ss != s && ss.last.Load() < cut {
					delete(m.connRates, k)
				}
			}
		}
	}
	m.sensorMu.Unlock()
	s.last.Store(now.UnixNano())
	d := s.rate.Record(1, limit, now)
	if d > 0 {
		// A refused connection does not count against the next, as
		// Kafka takes it back out of the IP's rate.
		s.rate.Unrecord(1)
		b.quotaThrottles.Add(1)
		b.rl.Info("connection over its IP's connection_creation_rate: closing it unserved", "client", remote.String(), "rate_limit", limit, "throttle", d)
	}
	return d
}

// remoteIP is the IP address of a connection's peer.
func remoteIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	if a == nil {
		return ""
	}
	h, _, _ := net.SplitHostPort(a.String())
	return h
}

// QuotaStat is one quota sensor's use, for /metrics: Kind is the quota key
// (producer_byte_rate, ...), User and Client the sensor's tags (who shares
// the quota, "" for a tag the quota does not split by).
type QuotaStat struct {
	Kind, User, Client string
	IP                 string // connection_creation_rate sensors only
	// Rate is the current windowed rate (bytes/s, percent of a thread,
	// or for controller mutations the tokens left); Limit the quota.
	Rate, Limit float64
	// Total is what was recorded; Throttle the throttle time given.
	Total    float64
	Throttle time.Duration
}

// QuotaStats returns every live quota sensor's use, and how many answers
// were throttled.
func (b *Broker) QuotaStats() ([]QuotaStat, uint64) {
	m := b.quotas
	set := m.set.Load()
	now := b.now()
	m.sensorMu.Lock()
	keys := make([]sensorKey, 0, len(m.sensors))
	sens := make([]*sensor, 0, len(m.sensors))
	for k, s := range m.sensors {
		keys = append(keys, k)
		sens = append(sens, s)
	}
	var out []QuotaStat
	for ip, s := range m.connRates {
		st := QuotaStat{Kind: quota.ConnectionCreationRate, IP: ip, Limit: set.ResolveIP(ip), Rate: s.rate.Measure(now)}
		st.Total, st.Throttle = s.rate.Stats()
		out = append(out, st)
	}
	m.sensorMu.Unlock()
	for i, k := range keys {
		st := QuotaStat{Kind: quotaKindKey[k.kind], User: k.user, Client: k.client}
		// The limit now in force for the sensor's tags.
		st.Limit = set.Resolve(st.Kind, k.user, k.client).Limit
		if s := sens[i]; s.rate != nil {
			st.Rate = s.rate.Measure(now)
			st.Total, st.Throttle = s.rate.Stats()
		} else {
			st.Rate = s.bucket.Tokens(st.Limit, now)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b QuotaStat) int {
		return strings.Compare(a.Kind+"\x00"+a.User+"\x00"+a.Client+"\x00"+a.IP, b.Kind+"\x00"+b.User+"\x00"+b.Client+"\x00"+b.IP)
	})
	return out, b.quotaThrottles.Load()
}

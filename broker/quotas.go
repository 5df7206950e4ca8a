package broker

// Client quotas (KIP-13, KIP-124, KIP-219, KIP-546, KIP-599), as Kafka's
// ClientQuotaManager, ClientRequestQuotaManager and
// ControllerMutationQuotaManager enforce them.
//
// The quotas (DescribeClientQuotas, AlterClientQuotas; package
// broker/internal/quota for the model, the precedence and the file) are an
// immutable quota.Set in an atomic pointer. With no quota set, a request
// costs one atomic load (quota.Manager.On). With quotas, each network
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
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/protocol"
)

// connQuota is one connection's resolved quotas (ConnInfo.Quota).
type connQuota struct {
	version      uint64
	user, client string
	limit        [quota.NumKinds]float64
	sensors      [quota.NumKinds]*quota.Sensor
	// mutationThrottle is set by the handler of a topic mutation for the
	// request being served (Serve calls of a connection never overlap).
	mutationThrottle time.Duration
}

// quotaUser is the name quotas know the connection's principal by.
func (b *Broker) quotaUser(req *protocol.Request) string { return b.principalName(req) }

func (b *Broker) connQuota(req *protocol.Request, now time.Time) *connQuota {
	set := b.quotas.Set()
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
	for k := range quota.NumKinds {
		r := set.Resolve(k.Key(), user, client)
		if r.Limit > 0 {
			cq.limit[k] = r.Limit
			cq.sensors[k] = b.quotas.Sensor(k, r.User, r.Client, now)
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
	if fr, ok := req.Body.(*kmsg.FetchRequest); ok && cq.sensors[quota.Fetch] != nil {
		// Kafka's getMaxValueInQuotaWindow: a fetch asks for at most
		// what the quota allows over the window (KIP-74 still returns
		// one batch if it is larger).
		w := b.quotas.Window()
		if most := cq.limit[quota.Fetch] * float64(w.Samples-1) * w.Size.Seconds(); most < float64(fr.MaxBytes) {
			fr.MaxBytes = int32(max(most, 1))
		}
	}
	reply := b.handle(ctx, req, a)
	now := b.now()
	var reqThrottle time.Duration
	if s := cq.sensors[quota.Request]; s != nil && !exemptFromRequestQuota(req.Key) {
		// Percent of one thread over the window: nanoseconds × 100 / 1e9
		// per second of the window (Kafka's nanosToPercentage).
		pct := float64(now.Sub(start).Nanoseconds()) * 100 / 1e9
		reqThrottle = min(s.Rate.Record(pct, cq.limit[quota.Request], now), b.quotas.Window().Size)
		s.Touch(now)
	}
	throttle := max(reqThrottle, cq.mutationThrottle)
	switch req.Key {
	case 0:
		if s := cq.sensors[quota.Produce]; s != nil {
			throttle = max(throttle, s.Rate.Record(float64(req.Size), cq.limit[quota.Produce], now))
			s.Touch(now)
		}
	case 1:
		if s := cq.sensors[quota.Fetch]; s != nil {
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
func (b *Broker) throttleFetch(req *protocol.Request, reply protocol.Reply, cq *connQuota, s *quota.Sensor, reqThrottle time.Duration) protocol.Reply {
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
		bw := s.Rate.Record(size, cq.limit[quota.Fetch], now)
		s.Touch(now)
		d := max(bw, reqThrottle)
		if d <= 0 {
			return r, 0
		}
		// Kafka's handleFetchRequest: a throttled fetch (by either
		// quota) is answered empty (getThrottledResponse), so its bytes
		// are taken back out of the fetch sensor; the client fetches the
		// same offsets after the throttle.
		s.Rate.Unrecord(size)
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
	if !b.quotas.On() || req.Conn == nil {
		return true
	}
	cq, _ := req.Conn.Quota.(*connQuota)
	if cq == nil || cq.sensors[quota.Mutation] == nil || cq.version != b.quotas.Set().Version {
		return true
	}
	s, rate, now := cq.sensors[quota.Mutation], cq.limit[quota.Mutation], b.now()
	s.Touch(now)
	if strict {
		if d := s.Bucket.Throttle(rate, now); d > 0 {
			cq.mutationThrottle = max(cq.mutationThrottle, d)
			return false
		}
	}
	cq.mutationThrottle = max(cq.mutationThrottle, s.Bucket.Take(float64(n), rate, now))
	return true
}

// ConnectionThrottle records a new connection from remote against its
// IP's connection_creation_rate quota and returns how long to hold it
// before closing it unserved, 0 to serve it.
func (b *Broker) ConnectionThrottle(remote net.Addr) time.Duration {
	m := b.quotas
	if !m.On() {
		return 0
	}
	ip := remoteIP(remote)
	limit := m.Set().ResolveIP(ip)
	if limit <= 0 {
		return 0
	}
	now := b.now()
	s := m.ConnRate(ip, now)
	s.Touch(now)
	d := s.Rate.Record(1, limit, now)
	if d > 0 {
		// A refused connection does not count against the next, as
		// Kafka takes it back out of the IP's rate.
		s.Rate.Unrecord(1)
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

// QuotaStat is one quota sensor's use, for /metrics; see quota.Stat.
type QuotaStat = quota.Stat

// QuotaStats returns every live quota sensor's use, and how many answers
// were throttled.
func (b *Broker) QuotaStats() ([]QuotaStat, uint64) {
	return b.quotas.Stats(b.now()), b.quotaThrottles.Load()
}

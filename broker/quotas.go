package broker

// Client quotas (KIP-13, KIP-124, KIP-219, KIP-546, KIP-599, KIP-612), as
// Kafka's ClientQuotaManager, ClientRequestQuotaManager and
// ControllerMutationQuotaManager enforce them. The quotas, their
// precedence and what each request is measured against are
// broker/internal/quota's (its doc, "Enforcement"). With no quota set, a
// request costs one atomic load (quota.Manager.On); with quotas, each
// network request goes through serveQuota, which measures it with its
// connection's quota.Conn (ConnInfo.Quota).
//
// The largest throttle goes into the response's throttle_time_ms and the
// connection is muted (not read) for that long (protocol ConnInfo.Mute).
// For versions where the client throttles itself (kmsg's ThrottleResponse
// "after response", KIP-219) the answer goes out at once; for older ones it
// is held back for the throttle time, as Kafka held them. A throttled
// Fetch is answered with no records (Kafka's getThrottledResponse). A
// connection over its IP's connection_creation_rate is not served and
// closed after the throttle time (ConnectionThrottle,
// protocol.Config.ConnThrottle), as Kafka's acceptor delays closing it.

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

// quotaUser is the name quotas know the connection's principal by.
func (b *Broker) quotaUser(req *protocol.Request) string { return b.principalName(req) }

// connQuota is req's connection's quota.Conn (ConnInfo.Quota), resolved
// anew when the quotas or the principal changed.
func (b *Broker) connQuota(req *protocol.Request, now time.Time) *quota.Conn {
	client := ""
	if req.ClientID != nil {
		client = *req.ClientID
	}
	cur, _ := req.Conn.Quota.(*quota.Conn)
	cq := b.quotas.Conn(cur, b.quotaUser(req), client, now)
	if cq != cur {
		req.Conn.Quota = cq
	}
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
	cq.BeginRequest()
	if fr, ok := req.Body.(*kmsg.FetchRequest); ok {
		fr.MaxBytes = cq.FetchMaxBytes(b.quotas.Window(), fr.MaxBytes)
	}
	reply := b.handle(ctx, req, a)
	now := b.now()
	var reqThrottle time.Duration
	if !exemptFromRequestQuota(req.Key) {
		reqThrottle = cq.RecordRequest(now.Sub(start), b.quotas.Window(), now)
	}
	throttle := max(reqThrottle, cq.MutationThrottle())
	switch req.Key {
	case 0:
		throttle = max(throttle, cq.Record(quota.Produce, float64(req.Size), now))
	case 1:
		if cq.Limited(quota.Fetch) {
			return b.throttleFetch(req, reply, cq, throttle)
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
func (b *Broker) throttleFetch(req *protocol.Request, reply protocol.Reply, cq *quota.Conn, reqThrottle time.Duration) protocol.Reply {
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
		d := max(cq.Record(quota.Fetch, size, now), reqThrottle)
		if d <= 0 {
			return r, 0
		}
		// Kafka's handleFetchRequest: a throttled fetch (by either
		// quota) is answered empty (getThrottledResponse), so its bytes
		// are taken back out of the fetch sensor; the client fetches the
		// same offsets after the throttle.
		cq.Unrecord(quota.Fetch, size)
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
// tokens for req (quota.Manager.Mutation); the throttle goes into the
// answer through the connection's quota.Conn.
func (b *Broker) mutationAllowed(req *protocol.Request, n int32, strict bool) bool {
	if !b.quotas.On() || req.Conn == nil {
		return true
	}
	cq, _ := req.Conn.Quota.(*quota.Conn)
	return b.quotas.Mutation(cq, n, strict, b.now())
}

// ConnectionThrottle records a new connection from remote against its
// IP's connection_creation_rate quota and returns how long to hold it
// before closing it unserved, 0 to serve it.
func (b *Broker) ConnectionThrottle(remote net.Addr) time.Duration {
	if !b.quotas.On() {
		return 0
	}
	d, limit := b.quotas.ConnectionThrottle(remoteIP(remote), b.now())
	if d > 0 {
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

package quota

import "time"

// Conn is one connection's resolved quotas: the limit of each kind for
// its user and client ID and the sensor shared by whoever the quota's
// entity covers. The broker keeps it with the connection, whose requests
// are served one at a time, so Conn has no lock; the sensors have theirs.
type Conn struct {
	version      uint64
	user, client string
	limit        [NumKinds]float64
	sensors      [NumKinds]*Sensor
	// mutationThrottle is what the topic mutations of the request being
	// served were throttled by (Mutation).
	mutationThrottle time.Duration
}

// Conn returns c if it is resolved for user and client under the Set in
// force, else a Conn newly resolved (sensors made at first use).
func (m *Manager) Conn(c *Conn, user, client string, now time.Time) *Conn {
	set := m.Set()
	if c != nil && c.version == set.Version && c.user == user && c.client == client {
		return c
	}
	c = &Conn{version: set.Version, user: user, client: client}
	for k := range NumKinds {
		r := set.Resolve(k.Key(), user, client)
		if r.Limit > 0 {
			c.limit[k] = r.Limit
			c.sensors[k] = m.Sensor(k, r.User, r.Client, now)
		}
	}
	return c
}

// Limited reports whether the connection has a quota of kind k.
func (c *Conn) Limited(k Kind) bool { return c.sensors[k] != nil }

// FetchMaxBytes is Kafka's getMaxValueInQuotaWindow: a fetch asks for at
// most what the fetch quota allows over the window (KIP-74 still returns
// one batch if it is larger).
func (c *Conn) FetchMaxBytes(w Window, maxBytes int32) int32 {
	if c.sensors[Fetch] == nil {
		return maxBytes
	}
	if most := c.limit[Fetch] * float64(w.Samples-1) * w.Size.Seconds(); most < float64(maxBytes) {
		return int32(max(most, 1))
	}
	return maxBytes
}

// BeginRequest starts a request: no mutation throttle yet.
func (c *Conn) BeginRequest() { c.mutationThrottle = 0 }

// RecordRequest records a request's handler time against
// request_percentage, as a percent of one thread over the window (Kafka's
// nanosToPercentage), and returns the throttle, capped at one window as
// Kafka's ClientRequestQuotaManager caps it.
func (c *Conn) RecordRequest(took time.Duration, w Window, now time.Time) time.Duration {
	s := c.sensors[Request]
	if s == nil {
		return 0
	}
	pct := float64(took.Nanoseconds()) * 100 / 1e9
	d := min(s.Rate.Record(pct, c.limit[Request], now), w.Size)
	s.Touch(now)
	return d
}

// Record records v (bytes) against kind k's rate (Produce, Fetch) and
// returns the throttle.
func (c *Conn) Record(k Kind, v float64, now time.Time) time.Duration {
	s := c.sensors[k]
	if s == nil {
		return 0
	}
	d := s.Rate.Record(v, c.limit[k], now)
	s.Touch(now)
	return d
}

// Unrecord takes v back out of kind k's rate: a throttled fetch is
// answered empty, so its bytes do not count (Kafka's handleFetchRequest).
func (c *Conn) Unrecord(k Kind, v float64) {
	if s := c.sensors[k]; s != nil {
		s.Rate.Unrecord(v)
	}
}

// Mutation takes n partitions' worth of controller_mutation_rate tokens
// (Kafka's ControllerMutationQuota): strict (the versions that know
// THROTTLING_QUOTA_EXCEEDED) refuses when the bucket is already empty,
// permissive only throttles. The throttle is kept for MutationThrottle.
// A Conn resolved under an older Set is not held to it.
func (m *Manager) Mutation(c *Conn, n int32, strict bool, now time.Time) bool {
	if c == nil || c.sensors[Mutation] == nil || c.version != m.Set().Version {
		return true
	}
	s, rate := c.sensors[Mutation], c.limit[Mutation]
	s.Touch(now)
	if strict {
		if d := s.Bucket.Throttle(rate, now); d > 0 {
			c.mutationThrottle = max(c.mutationThrottle, d)
			return false
		}
	}
	c.mutationThrottle = max(c.mutationThrottle, s.Bucket.Take(float64(n), rate, now))
	return true
}

// MutationThrottle is the largest throttle the request's mutations got.
func (c *Conn) MutationThrottle() time.Duration { return c.mutationThrottle }

// ConnectionThrottle records a new connection from ip against its
// connection_creation_rate quota (KIP-612) and returns how long to hold it
// before closing it unserved (0: serve it) and the quota.
func (m *Manager) ConnectionThrottle(ip string, now time.Time) (time.Duration, float64) {
	limit := m.Set().ResolveIP(ip)
	if limit <= 0 {
		return 0, 0
	}
	s := m.ConnRate(ip, now)
	s.Touch(now)
	d := s.Rate.Record(1, limit, now)
	if d > 0 {
		// A refused connection does not count against the next, as
		// Kafka takes it back out of the IP's rate.
		s.Rate.Unrecord(1)
	}
	return d, limit
}

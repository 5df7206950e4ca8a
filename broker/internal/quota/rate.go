package quota

import (
	"math"
	"sync"
	"time"
)

// Window is Kafka's quota.window.num and quota.window.size.seconds.
type Window struct {
	Samples int           // default 11
	Size    time.Duration // default 1 s
}

// DefaultWindow is Kafka's default: 11 samples of 1 s.
var DefaultWindow = Window{Samples: 11, Size: time.Second}

// Normalize fills zero fields with Kafka's defaults.
func (w Window) Normalize() Window {
	if w.Samples <= 0 {
		w.Samples = DefaultWindow.Samples
	}
	if w.Size <= 0 {
		w.Size = DefaultWindow.Size
	}
	return w
}

type sample struct {
	start time.Time // Kafka's lastWindowMs
	value float64
}

// Rate is Kafka's Rate over a SampledStat (package doc); safe for
// concurrent use.
type Rate struct {
	w       Window
	mu      sync.Mutex
	samples []sample
	cur     int
	// Throttled counts the throttle time this sensor has given, for
	// metrics.
	throttled time.Duration
	total     float64
}

// NewRate returns a rate whose first sample starts at now, as Kafka's
// sensor does when it is created.
func NewRate(w Window, now time.Time) *Rate {
	w = w.Normalize()
	return &Rate{w: w, samples: []sample{{start: now}}}
}

// Record adds v at now and returns the throttle time for bound (0: within
// it, or bound <= 0).
func (r *Rate) Record(v, bound float64, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.samples[r.cur]
	if now.Sub(s.start) >= r.w.Size {
		r.cur = (r.cur + 1) % r.w.Samples
		if r.cur >= len(r.samples) {
			r.samples = append(r.samples, sample{start: now})
		} else {
			r.samples[r.cur] = sample{start: now}
		}
		s = &r.samples[r.cur]
	}
	s.value += v
	r.total += v
	if bound <= 0 {
		return 0
	}
	rate, win := r.measureLocked(now)
	if rate <= bound {
		return 0
	}
	// ClientQuotaManager.throttleTime: how long until the rate over the
	// window falls back to the bound.
	d := time.Duration(math.Round((rate-bound)/bound*float64(win.Milliseconds()))) * time.Millisecond
	r.throttled += d
	return d
}

// Measure returns the rate per second at now.
func (r *Rate) Measure(now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, _ := r.measureLocked(now)
	return v
}

// Stats returns the total recorded and the throttle time given.
func (r *Rate) Stats() (total float64, throttled time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total, r.throttled
}

// Unrecord takes v back out of the current sample (Kafka unrecords a
// fetch's second sensor when the other one throttles).
func (r *Rate) Unrecord(v float64) {
	r.mu.Lock()
	r.samples[r.cur].value -= v
	r.total -= v
	r.mu.Unlock()
}

// measureLocked is Rate.measure and its windowSize.
func (r *Rate) measureLocked(now time.Time) (float64, time.Duration) {
	expire := time.Duration(r.w.Samples) * r.w.Size
	var sum float64
	oldest := now
	for i := range r.samples {
		s := &r.samples[i]
		if now.Sub(s.start) >= expire {
			*s = sample{start: now}
		}
		sum += s.value
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := now.Sub(oldest)
	full := int(elapsed / r.w.Size)
	if min := r.w.Samples - 1; full < min {
		elapsed += time.Duration(min-full) * r.w.Size
	}
	if elapsed < time.Millisecond {
		elapsed = time.Millisecond
	}
	return sum / elapsed.Seconds(), elapsed
}

// Bucket is Kafka's TokenBucket (controller_mutation_rate).
type Bucket struct {
	w      Window
	mu     sync.Mutex
	tokens float64
	last   time.Time
	full   bool // tokens set (the bucket starts full)
}

// NewBucket returns a full bucket.
func NewBucket(w Window) *Bucket { return &Bucket{w: w.Normalize()} }

func (b *Bucket) refill(rate float64, now time.Time) {
	burst := rate * float64(b.w.Samples) * b.w.Size.Seconds()
	if !b.full {
		b.tokens, b.full = burst, true
	} else {
		b.tokens = math.Min(burst, b.tokens+rate*now.Sub(b.last).Seconds())
	}
	b.last = now
}

// Throttle is how long a client must wait before the bucket holds tokens
// again (0: it has some).
func (b *Bucket) Throttle(rate float64, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(rate, now)
	return b.throttleLocked(rate)
}

func (b *Bucket) throttleLocked(rate float64) time.Duration {
	if b.tokens >= 0 || rate <= 0 {
		return 0
	}
	return time.Duration(math.Round(-b.tokens/rate*1000)) * time.Millisecond
}

// Take removes n tokens (the bucket may go below zero) and returns the
// resulting throttle time.
func (b *Bucket) Take(n, rate float64, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(rate, now)
	b.tokens -= n
	return b.throttleLocked(rate)
}

// Tokens returns the tokens left at now.
func (b *Bucket) Tokens(rate float64, now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(rate, now)
	return b.tokens
}

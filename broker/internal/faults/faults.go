package faults

// Every fault is matched per request on the connection's reader goroutine
// and acts before the handler (errors, drops, callbacks: the request is
// not handled, so an injected produce error writes nothing) or around its
// reply (delays, holds, drop after, swallow, throttle).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fault is one injected failure: which requests it matches, how often it
// fires and what it does. Zero match fields match everything.
type Fault struct {
	// Match. Keys empty: every API key. MinVersion/MaxVersion bound the
	// request version when MaxVersion >= 0 is set via HasVersions.
	Keys         []int16
	HasVersions  bool
	MinVersion   int16
	MaxVersion   int16
	Topic        string // a request naming this topic
	Partition    int32  // with Topic and HasPartition: this partition
	HasPartition bool
	Group        string // a request for this group (or its coordinator)
	TxnID        string // a request for this transactional ID
	ClientID     string
	Listener     string
	ConnID       uint64 // 0: any connection

	// Firing. Times 0: until removed. Probability in (0,1): each match
	// fires with that probability, drawn from Seed (reproducible).
	Times       int
	Probability float64
	Seed        uint64

	// Actions, in the order they apply.
	//
	// ErrorCode answers without handling, the code placed where Kafka
	// puts it for that response (each partition's, else the top level).
	ErrorCode int16
	// DropBefore closes the connection without handling the request.
	DropBefore bool
	// Callback (Go only) sees the request first: it may answer (return
	// a response), pass on (call next, return what it gives, perhaps
	// modified) or drop the connection (return an error). next runs the
	// handler and waits for its answer on the connection's reader, so
	// later requests on that connection wait too.
	Callback func(req kmsg.Request, next func() (kmsg.Response, error)) (kmsg.Response, error)
	// Delay (up to DelayMax when larger: uniform in the range) holds the
	// answer back; the request is handled at once.
	Delay, DelayMax time.Duration
	// Hold keeps the answer until Release (or removal).
	Hold bool
	// DropAfter handles the request, then closes the connection instead
	// of answering (the client cannot know whether it was applied).
	DropAfter bool
	// Swallow handles the request and never answers.
	Swallow bool
	// ThrottleMillis sets throttle_time_ms on the answer.
	ThrottleMillis int32
}

// Info is a fault as listed: its ID, how often it fired, and whether it
// can still fire.
type Info struct {
	ID    uint64
	Fault Fault
	Fired int64
	Done  bool // fired its Times
	Held  int  // answers held right now
}

// Armed is an installed fault.
type Armed struct {
	id    uint64
	f     Fault
	fired atomic.Int64

	mu       sync.Mutex
	rng      *rand.Rand
	released chan struct{} // closed by Release and removal
	held     int
}

// Set is the faults of one broker. The zero Set has none.
type Set struct {
	list   atomic.Pointer[[]*Armed] // nil: none (the fast path)
	mu     sync.Mutex               // serialises writers of list
	nextID atomic.Uint64
}

// ErrNoFault is returned for an unknown fault ID.
var ErrNoFault = errors.New("no such fault")

// ErrDrop is the error of a connection closed on purpose by a fault.
var ErrDrop = errors.New("connection dropped by an injected fault")

// Active is the installed faults in the order added, nil when none: one
// atomic load, the whole cost of faults on a request when none is set.
func (s *Set) Active() Active {
	p := s.list.Load()
	if p == nil {
		return nil
	}
	return *p
}

// Add installs f and returns its ID.
func (s *Set) Add(f Fault) (uint64, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	ft := &Armed{id: s.nextID.Add(1), f: f, released: make(chan struct{})}
	ft.f.Keys = slices.Clone(f.Keys)
	if f.Probability > 0 && f.Probability < 1 {
		ft.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var next []*Armed
	if p := s.list.Load(); p != nil {
		next = slices.Clone(*p)
	}
	next = append(next, ft)
	s.list.Store(&next)
	return ft.id, nil
}

func (f *Fault) check() error {
	if f.HasVersions && f.MinVersion > f.MaxVersion {
		return fmt.Errorf("fault: min version %d above max version %d", f.MinVersion, f.MaxVersion)
	}
	if f.HasPartition && f.Topic == "" {
		return errors.New("fault: a partition needs its topic")
	}
	if f.Times < 0 {
		return fmt.Errorf("fault: times %d is negative", f.Times)
	}
	if f.Probability < 0 || f.Probability > 1 {
		return fmt.Errorf("fault: probability %v is not in [0, 1]", f.Probability)
	}
	if f.Delay < 0 || f.DelayMax < 0 {
		return errors.New("fault: negative delay")
	}
	if f.ThrottleMillis < 0 {
		return errors.New("fault: negative throttle")
	}
	if f.ErrorCode < 0 && ErrorName(f.ErrorCode) == "" {
		return fmt.Errorf("fault: unknown error code %d", f.ErrorCode)
	}
	if f.ErrorCode == 0 && !f.DropBefore && f.Callback == nil && f.Delay == 0 && f.DelayMax == 0 &&
		!f.Hold && !f.DropAfter && !f.Swallow && f.ThrottleMillis == 0 {
		return errors.New("fault: no action (error code, drop, delay, hold, swallow, throttle or callback)")
	}
	return nil
}

// String is a short description for logs.
func (f Fault) String() string {
	return fmt.Sprintf("keys=%v topic=%q group=%q txn=%q client=%q error=%d drop_before=%v delay=%v hold=%v drop_after=%v swallow=%v throttle=%d times=%d p=%v",
		f.Keys, f.Topic, f.Group, f.TxnID, f.ClientID, f.ErrorCode, f.DropBefore, f.Delay, f.Hold, f.DropAfter, f.Swallow, f.ThrottleMillis, f.Times, f.Probability)
}

// Remove removes a fault, releasing its held answers, and returns how
// often it fired.
func (s *Set) Remove(id uint64) (fired int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.list.Load()
	if p == nil {
		return 0, ErrNoFault
	}
	i := slices.IndexFunc(*p, func(f *Armed) bool { return f.id == id })
	if i < 0 {
		return 0, ErrNoFault
	}
	ft := (*p)[i]
	next := slices.Delete(slices.Clone(*p), i, i+1)
	if len(next) == 0 {
		s.list.Store(nil) // back to the fast path
	} else {
		s.list.Store(&next)
	}
	ft.release()
	return ft.fired.Load(), nil
}

// Clear removes every fault.
func (s *Set) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.list.Swap(nil); p != nil {
		for _, ft := range *p {
			ft.release()
		}
	}
}

// Release lets the answers a Hold fault keeps go out; later matches are
// held again on a fresh gate.
func (s *Set) Release(id uint64) error {
	ft := s.find(id)
	if ft == nil {
		return ErrNoFault
	}
	ft.mu.Lock()
	close(ft.released)
	ft.released = make(chan struct{})
	ft.mu.Unlock()
	return nil
}

func (ft *Armed) release() {
	ft.mu.Lock()
	select {
	case <-ft.released:
	default:
		close(ft.released)
	}
	ft.mu.Unlock()
}

func (s *Set) find(id uint64) *Armed {
	for _, ft := range s.Active() {
		if ft.id == id {
			return ft
		}
	}
	return nil
}

// List lists the faults in the order added.
func (s *Set) List() []Info {
	p := s.Active()
	if p == nil {
		return nil
	}
	out := make([]Info, 0, len(p))
	for _, ft := range p {
		fired := ft.fired.Load()
		ft.mu.Lock()
		held := ft.held
		ft.mu.Unlock()
		out = append(out, Info{ID: ft.id, Fault: ft.f, Fired: fired, Done: ft.f.Times > 0 && fired >= int64(ft.f.Times), Held: held})
	}
	return out
}

// Get returns one fault.
func (s *Set) Get(id uint64) (Info, bool) {
	for _, fi := range s.List() {
		if fi.ID == id {
			return fi, true
		}
	}
	return Info{}, false
}

// Request is what a fault matches a request on. The broker fills it only
// for requests from the network: the embedding program's own requests
// (the control API's inspection and seeding) are not a client under test.
type Request struct {
	Key, Version int16
	ClientID     *string
	Listener     string
	ConnID       uint64
	Body         kmsg.Request
	// TopicID is the ID of a topic by name, zero when unknown, for
	// matching requests that name topics by ID.
	TopicID func(topic string) [16]byte
}

// Active is a snapshot of a Set's faults.
type Active []*Armed

// Pick is the first fault that matches req and fires (counted), nil when
// none does: one fault per request keeps the outcome predictable.
func (a Active) Pick(req *Request) *Armed {
	for _, ft := range a {
		if ft.take(req) {
			return ft
		}
	}
	return nil
}

// take reports whether ft matches req and fires (counted).
func (ft *Armed) take(req *Request) bool {
	f := &ft.f
	if len(f.Keys) > 0 && !slices.Contains(f.Keys, req.Key) {
		return false
	}
	if f.HasVersions && (req.Version < f.MinVersion || req.Version > f.MaxVersion) {
		return false
	}
	if f.ClientID != "" && (req.ClientID == nil || *req.ClientID != f.ClientID) {
		return false
	}
	if f.Listener != "" && req.Listener != f.Listener {
		return false
	}
	if f.ConnID != 0 && req.ConnID != f.ConnID {
		return false
	}
	if f.Topic != "" && !requestTouches(req, f.Topic, f.Partition, f.HasPartition) {
		return false
	}
	if f.Group != "" && !slices.Contains(requestGroups(req.Body), f.Group) {
		return false
	}
	if f.TxnID != "" && !slices.Contains(requestTxnIDs(req.Body), f.TxnID) {
		return false
	}
	if ft.rng != nil {
		ft.mu.Lock()
		miss := ft.rng.Float64() >= f.Probability
		ft.mu.Unlock()
		if miss {
			return false
		}
	}
	if f.Times > 0 {
		for {
			n := ft.fired.Load()
			if n >= int64(f.Times) {
				return false
			}
			if ft.fired.CompareAndSwap(n, n+1) {
				return true
			}
		}
	}
	ft.fired.Add(1)
	return true
}

// ID is the fault's ID.
func (ft *Armed) ID() uint64 { return ft.id }

// Fault is the fault as installed; the caller must not change it.
func (ft *Armed) Fault() *Fault { return &ft.f }

// ShapesAnswer reports whether the fault acts on the handler's answer
// (delay, hold, drop after, swallow, throttle), which Around then does.
func (ft *Armed) ShapesAnswer() bool {
	f := &ft.f
	return f.Delay != 0 || f.DelayMax != 0 || f.Hold || f.DropAfter || f.Swallow || f.ThrottleMillis != 0
}

// Around returns the wait that delivers answer's result as the fault
// says: held until released, delayed (counted from now), throttled,
// swallowed (a response that holds resources is released), or replaced by
// closing the connection (closeConn) and ErrDrop. ctx ends the hold and
// the delay. It is called when the handler has answered or returned its
// wait; the hold counts from then.
func (ft *Armed) Around(ctx context.Context, answer func() (kmsg.Response, error), closeConn func()) func() (kmsg.Response, error) {
	f := &ft.f
	var delay time.Duration
	if f.Delay > 0 || f.DelayMax > 0 {
		delay = f.Delay
		if f.DelayMax > f.Delay {
			delay += rand.N(f.DelayMax - f.Delay + 1)
		}
	}
	start := time.Now()
	var gate chan struct{}
	if f.Hold {
		ft.mu.Lock()
		gate = ft.released
		ft.held++
		ft.mu.Unlock()
	}
	return func() (kmsg.Response, error) {
		resp, err := answer()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
			}
			ft.mu.Lock()
			ft.held--
			ft.mu.Unlock()
		}
		if d := delay - time.Since(start); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		if err != nil {
			return resp, err
		}
		if f.DropAfter {
			closeConn()
			return resp, ErrDrop
		}
		if f.Swallow {
			if rl, ok := resp.(interface{ Release() }); ok {
				rl.Release() // protocol.Releaser: a fetch body's pinned file ranges
			}
			return nil, nil
		}
		if f.ThrottleMillis > 0 {
			if t, ok := resp.(interface{ SetThrottle(int32) }); ok {
				t.SetThrottle(f.ThrottleMillis)
			}
		}
		return resp, nil
	}
}

// partitionKey carries a partition-scoped error fault to the handler.
type partitionKey struct{}

// WithPartition is ctx carrying f, for the handlers that answer a
// fault's partitions with its code and serve the others (PartitionCode).
func WithPartition(ctx context.Context, f *Fault) context.Context {
	return context.WithValue(ctx, partitionKey{}, f)
}

// PartitionCode is the error code the fault in ctx gives the partition,
// 0 when none.
func PartitionCode(ctx context.Context, topic string, partition int32) int16 {
	f, _ := ctx.Value(partitionKey{}).(*Fault)
	if f == nil || f.Topic != topic || f.HasPartition && f.Partition != partition {
		return 0
	}
	return f.ErrorCode
}

// IsAcks0 reports whether r is a produce request that wants no answer.
func IsAcks0(r kmsg.Request) bool {
	p, ok := r.(*kmsg.ProduceRequest)
	return ok && p.Acks == 0
}

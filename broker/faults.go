package broker

// Fault injection: tests steer the broker into the failures a real
// cluster shows (an error code, a slow answer, a dropped connection) to
// test their clients' handling. Faults live in a copy-on-write list behind
// one atomic pointer, so with none set dispatch pays one load of a nil
// pointer. Every fault is matched per request on the reader goroutine and
// acts before the handler (errors, drops, callbacks: the request is not
// handled, so an injected produce error writes nothing) or around its
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

	"github.com/minikafka/minikafka/protocol"
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

// FaultInfo is a fault as listed: its ID, how often it fired, and whether
// it can still fire.
type FaultInfo struct {
	ID    uint64
	Fault Fault
	Fired int64
	Done  bool // fired its Times
	Held  int  // answers held right now
}

type fault struct {
	id    uint64
	f     Fault
	fired atomic.Int64

	mu       sync.Mutex
	rng      *rand.Rand
	released chan struct{} // closed by Release and removal
	held     int
}

// faultSet is the faults engine state of a Broker.
type faultSet struct {
	list   atomic.Pointer[[]*fault] // nil: none (the fast path)
	mu     sync.Mutex               // serialises writers of list
	nextID atomic.Uint64
}

// ErrNoFault is returned for an unknown fault ID.
var ErrNoFault = errors.New("no such fault")

// AddFault installs f and returns its ID.
func (b *Broker) AddFault(f Fault) (uint64, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	ft := &fault{id: b.faults.nextID.Add(1), f: f, released: make(chan struct{})}
	ft.f.Keys = slices.Clone(f.Keys)
	if f.Probability > 0 && f.Probability < 1 {
		ft.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	}
	s := &b.faults
	s.mu.Lock()
	defer s.mu.Unlock()
	var next []*fault
	if p := s.list.Load(); p != nil {
		next = slices.Clone(*p)
	}
	next = append(next, ft)
	s.list.Store(&next)
	b.log.Info("fault added", "id", ft.id, "fault", f.String())
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
	if f.ErrorCode < 0 && kerrName(f.ErrorCode) == "" {
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

// RemoveFault removes a fault; held answers are released.
func (b *Broker) RemoveFault(id uint64) error {
	s := &b.faults
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.list.Load()
	if p == nil {
		return ErrNoFault
	}
	i := slices.IndexFunc(*p, func(f *fault) bool { return f.id == id })
	if i < 0 {
		return ErrNoFault
	}
	ft := (*p)[i]
	next := slices.Delete(slices.Clone(*p), i, i+1)
	if len(next) == 0 {
		s.list.Store(nil) // back to the fast path
	} else {
		s.list.Store(&next)
	}
	ft.release()
	b.log.Info("fault removed", "id", id, "fired", ft.fired.Load())
	return nil
}

// ClearFaults removes every fault.
func (b *Broker) ClearFaults() {
	s := &b.faults
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.list.Swap(nil); p != nil {
		for _, ft := range *p {
			ft.release()
		}
	}
}

// ReleaseFault lets the answers a Hold fault keeps go out; later matches
// are held again on a fresh gate.
func (b *Broker) ReleaseFault(id uint64) error {
	ft := b.findFault(id)
	if ft == nil {
		return ErrNoFault
	}
	ft.mu.Lock()
	close(ft.released)
	ft.released = make(chan struct{})
	ft.mu.Unlock()
	return nil
}

func (ft *fault) release() {
	ft.mu.Lock()
	select {
	case <-ft.released:
	default:
		close(ft.released)
	}
	ft.mu.Unlock()
}

func (b *Broker) findFault(id uint64) *fault {
	p := b.faults.list.Load()
	if p == nil {
		return nil
	}
	for _, ft := range *p {
		if ft.id == id {
			return ft
		}
	}
	return nil
}

// Faults lists the faults in the order added.
func (b *Broker) Faults() []FaultInfo {
	p := b.faults.list.Load()
	if p == nil {
		return nil
	}
	out := make([]FaultInfo, 0, len(*p))
	for _, ft := range *p {
		fired := ft.fired.Load()
		ft.mu.Lock()
		held := ft.held
		ft.mu.Unlock()
		out = append(out, FaultInfo{ID: ft.id, Fault: ft.f, Fired: fired, Done: ft.f.Times > 0 && fired >= int64(ft.f.Times), Held: held})
	}
	return out
}

// Fault returns one fault.
func (b *Broker) Fault(id uint64) (FaultInfo, bool) {
	for _, fi := range b.Faults() {
		if fi.ID == id {
			return fi, true
		}
	}
	return FaultInfo{}, false
}

// take reports whether ft matches req and fires (counted).
func (ft *fault) take(b *Broker, req *protocol.Request) bool {
	f := &ft.f
	if req.Conn == nil || !req.Conn.FromNetwork() {
		// The embedding program's own requests (the control API's
		// inspection and seeding) are not a client under test.
		return false
	}
	if len(f.Keys) > 0 && !slices.Contains(f.Keys, req.Key) {
		return false
	}
	if f.HasVersions && (req.Version < f.MinVersion || req.Version > f.MaxVersion) {
		return false
	}
	if f.ClientID != "" && (req.ClientID == nil || *req.ClientID != f.ClientID) {
		return false
	}
	if f.Listener != "" && (req.Conn == nil || req.Conn.Listener != f.Listener) {
		return false
	}
	if f.ConnID != 0 && (req.Conn == nil || req.Conn.ID != f.ConnID) {
		return false
	}
	if f.Topic != "" && !requestTouches(b, req.Body, f.Topic, f.Partition, f.HasPartition) {
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

// errFaultDrop closes a connection on purpose.
var errFaultDrop = errors.New("connection dropped by an injected fault")

// serveFaults is dispatch with faults set: the first fault that fires
// acts (one fault per request keeps the outcome predictable).
func (b *Broker) serveFaults(ctx context.Context, req *protocol.Request, a *api, faults []*fault) protocol.Reply {
	var ft *fault
	for _, c := range faults {
		if c.take(b, req) {
			ft = c
			break
		}
	}
	if ft == nil {
		return b.dispatch(ctx, req, a)
	}
	f := &ft.f
	b.logReq(levelFault, req, "fault fired", "fault", ft.id)
	if f.DropBefore {
		req.Conn.Close()
		return protocol.Reply{Err: errFaultDrop}
	}
	var reply protocol.Reply
	switch {
	case f.ErrorCode != 0 && f.Topic != "" && req.Key == 0:
		reply = b.splitProduce(ctx, req, a, f)
	case f.ErrorCode != 0 && f.Topic != "" && (req.Key == 1 || req.Key == 2 || req.Key == 23):
		// Fetch, ListOffsets, OffsetForLeaderEpoch: the handler answers
		// the fault's partitions with its code and serves the others
		// (a Fetch answer is written from file bytes, so it cannot be
		// split and merged afterwards as produce is).
		reply = b.dispatch(context.WithValue(ctx, partitionFaultKey{}, f), req, a)
	case f.ErrorCode != 0:
		reply = protocol.Reply{Response: faultResponse(req.Body, f.ErrorCode)}
		if isAcks0(req.Body) {
			reply = protocol.Reply{} // acks=0 gets no answer, error or not
		}
	case f.Callback != nil:
		next := func() (kmsg.Response, error) {
			r := b.dispatch(ctx, req, a)
			if r.Wait != nil {
				return r.Wait()
			}
			return r.Response, r.Err
		}
		resp, err := f.Callback(req.Body, next)
		if err != nil {
			req.Conn.Close()
			return protocol.Reply{Err: err}
		}
		if resp != nil {
			resp.SetVersion(req.Version)
		}
		reply = protocol.Reply{Response: resp}
	default:
		reply = b.dispatch(ctx, req, a)
	}
	if reply.Err != nil || (reply.Response == nil && reply.Wait == nil) {
		return reply
	}
	if f.Delay == 0 && f.DelayMax == 0 && !f.Hold && !f.DropAfter && !f.Swallow && f.ThrottleMillis == 0 {
		return reply
	}
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
	conn := req.Conn
	inner := reply
	return protocol.Reply{Wait: func() (kmsg.Response, error) {
		resp, err := inner.Response, error(nil)
		if inner.Wait != nil {
			resp, err = inner.Wait()
		}
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
			conn.Close()
			return resp, errFaultDrop
		}
		if f.Swallow {
			if rl, ok := resp.(protocol.Releaser); ok {
				rl.Release()
			}
			return nil, nil
		}
		if f.ThrottleMillis > 0 {
			if t, ok := resp.(interface{ SetThrottle(int32) }); ok {
				t.SetThrottle(f.ThrottleMillis)
			}
		}
		return resp, nil
	}}
}

// partitionFaultKey carries a partition-scoped error fault to the handler
// (serveFaults).
type partitionFaultKey struct{}

// partitionFault is the error code the fault in ctx gives the partition,
// 0 when none.
func partitionFault(ctx context.Context, topic string, partition int32) int16 {
	f, _ := ctx.Value(partitionFaultKey{}).(*Fault)
	if f == nil || f.Topic != topic || f.HasPartition && f.Partition != partition {
		return 0
	}
	return f.ErrorCode
}

func isAcks0(r kmsg.Request) bool {
	p, ok := r.(*kmsg.ProduceRequest)
	return ok && p.Acks == 0
}

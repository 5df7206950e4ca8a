package minikafka

import (
	"errors"
	"time"

	"github.com/minikafka/minikafka/broker"
)

// Fault is one injected failure; see broker.Fault for its fields.
type Fault = broker.Fault

// FaultInfo is a fault as listed, with how often it fired.
type FaultInfo = broker.FaultInfo

// RequestLogEntry is one request of the request log.
type RequestLogEntry = broker.RequestLogEntry

// ErrNoFault is returned for an unknown fault ID.
var ErrNoFault = broker.ErrNoFault

// Kafka error codes the broker-level faults answer.
const (
	errNotLeaderOrFollower     = 6
	errCoordinatorLoadInProg   = 14
	errCoordinatorNotAvailable = 15
)

// defaultRequestLog is how many requests the log keeps with the control
// API on: enough for a test's conversation, a few hundred KiB.
const defaultRequestLog = 1024

// AddFault installs f; it fires until removed, or f.Times times.
func (b *Broker) AddFault(f Fault) (uint64, error) { return b.brk.AddFault(f) }

// RemoveFault removes a fault, releasing answers it holds.
func (b *Broker) RemoveFault(id uint64) error { return b.brk.RemoveFault(id) }

// ReleaseFault lets the answers a Hold fault keeps go out.
func (b *Broker) ReleaseFault(id uint64) error { return b.brk.ReleaseFault(id) }

// Faults lists the faults with how often each fired.
func (b *Broker) Faults() []FaultInfo { return b.brk.Faults() }

// ClearFaults removes every fault.
func (b *Broker) ClearFaults() { b.brk.ClearFaults() }

// PausePartition makes the partition (every partition of topic when
// partition < 0) answer NOT_LEADER_OR_FOLLOWER to produce, fetch, list
// offsets and offset-for-leader-epoch, what a client sees of a leader
// change on a single node; Metadata still names this broker, so clients
// retry here. Remove the fault (RemoveFault) to resume. A request naming
// other partitions too has those served: written, fetched, listed.
func (b *Broker) PausePartition(topic string, partition int32) (uint64, error) {
	if topic == "" {
		return 0, errors.New("minikafka: pause: a topic is required")
	}
	return b.brk.AddFault(Fault{
		Keys:  []int16{0, 1, 2, 23},
		Topic: topic, Partition: partition, HasPartition: partition >= 0,
		ErrorCode: errNotLeaderOrFollower,
	})
}

// CoordinatorUnavailable makes the group's coordinator answer
// COORDINATOR_NOT_AVAILABLE (COORDINATOR_LOAD_IN_PROGRESS with loading)
// to FindCoordinator and every group request for it, until removed.
func (b *Broker) CoordinatorUnavailable(group string, loading bool) (uint64, error) {
	if group == "" {
		return 0, errors.New("minikafka: coordinator fault: a group is required")
	}
	code := int16(errCoordinatorNotAvailable)
	if loading {
		code = errCoordinatorLoadInProg
	}
	return b.brk.AddFault(Fault{Group: group, ErrorCode: code})
}

// Throttle sets throttle_time_ms on every answer (of keys, all when
// empty), as a quota-enforcing broker does, until removed.
func (b *Broker) Throttle(d time.Duration, keys ...int16) (uint64, error) {
	if d <= 0 {
		return 0, errors.New("minikafka: throttle: need a positive duration")
	}
	return b.brk.AddFault(Fault{Keys: keys, ThrottleMillis: int32(d / time.Millisecond)})
}

// SetRTT delays every answer on connection connID (every connection when
// 0) by rtt, as a distant network would, until removed. Answers on one
// connection keep their order, so pipelined requests each wait rtt from
// their arrival, as over a real link.
func (b *Broker) SetRTT(rtt time.Duration, connID uint64) (uint64, error) {
	if rtt <= 0 {
		return 0, errors.New("minikafka: rtt: need a positive duration")
	}
	return b.brk.AddFault(Fault{ConnID: connID, Delay: rtt})
}

// Down takes the broker down for clients: open connections are closed
// and the listeners unbound, so new connections are refused as by a
// stopped broker, until Up binds the same addresses again (a TCP listener
// the program gave with WithListener is closed too and replaced by a new
// one on its address; one of another kind stays bound and resets new
// connections instead). The broker comes back where clients look for it, its state
// (topics, offsets, groups) kept, as a restarted broker's would be.
func (b *Broker) Down() {
	for _, s := range b.srvs {
		_ = s.SetRefusing(true) // going down cannot fail
	}
	b.log.Info("broker down (fault)")
}

// Up ends Down. It fails only if a port was taken meanwhile by another
// process; the listeners that could not bind stay down.
func (b *Broker) Up() error {
	var errs []error
	for i, s := range b.srvs {
		if b.nodeStopped(b.listeners[i].Node) {
			continue // StopNode's, until StartNode
		}
		if err := s.SetRefusing(false); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		b.log.Error("broker up (fault) failed", "err", err)
		return err
	}
	b.log.Info("broker up (fault)")
	return nil
}

// IsDown reports whether Down is in force.
func (b *Broker) IsDown() bool { return len(b.srvs) > 0 && b.srvs[0].Refusing() }

// EnableRequestLog keeps the last n requests (RequestLog); n <= 0 turns
// it off. It is on, with 1024, when the control API is.
func (b *Broker) EnableRequestLog(n int) { b.brk.EnableRequestLog(n) }

// RequestLog returns the logged requests, oldest first.
func (b *Broker) RequestLog() []RequestLogEntry { return b.brk.RequestLog() }

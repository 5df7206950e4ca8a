package broker

// Fault injection (broker/internal/faults owns the faults, their matching
// and the shape of an injected error): tests steer the broker into the
// failures a real cluster shows (an error code, a slow answer, a dropped
// connection) to test their clients' handling. With none set dispatch
// pays one load of a nil pointer. What stays here needs the handlers and
// the connection: serveFaults, splitting a produce, the partition-scoped
// errors of Fetch, ListOffsets and OffsetForLeaderEpoch.

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/faults"
	"github.com/minikafka/minikafka/protocol"
)

// Fault is one injected failure: which requests it matches, how often it
// fires and what it does; see faults.Fault for its fields.
type Fault = faults.Fault

// FaultInfo is a fault as listed: its ID, how often it fired, and whether
// it can still fire.
type FaultInfo = faults.Info

// ErrNoFault is returned for an unknown fault ID.
var ErrNoFault = faults.ErrNoFault

// levelFault logs fired faults at info: a test reading the log wants to
// see where its fault acted.
const levelFault = slog.LevelInfo

// AddFault installs f and returns its ID.
func (b *Broker) AddFault(f Fault) (uint64, error) {
	id, err := b.faults.Add(f)
	if err != nil {
		return 0, err
	}
	b.log.Info("fault added", "id", id, "fault", f.String())
	return id, nil
}

// RemoveFault removes a fault; held answers are released.
func (b *Broker) RemoveFault(id uint64) error {
	fired, err := b.faults.Remove(id)
	if err != nil {
		return err
	}
	b.log.Info("fault removed", "id", id, "fired", fired)
	return nil
}

// ClearFaults removes every fault.
func (b *Broker) ClearFaults() { b.faults.Clear() }

// ReleaseFault lets the answers a Hold fault keeps go out; later matches
// are held again on a fresh gate.
func (b *Broker) ReleaseFault(id uint64) error { return b.faults.Release(id) }

// Faults lists the faults in the order added.
func (b *Broker) Faults() []FaultInfo { return b.faults.List() }

// Fault returns one fault.
func (b *Broker) Fault(id uint64) (FaultInfo, bool) { return b.faults.Get(id) }

// KafkaErrorCode parses a Kafka error name (NOT_LEADER_OR_FOLLOWER) into
// its code.
func KafkaErrorCode(name string) (int16, bool) { return faults.ErrorCode(name) }

// KafkaErrorName is the Kafka name of an error code, "" when unknown.
func KafkaErrorName(code int16) string { return faults.ErrorName(code) }

// topicIDOf is the ID of a topic, zero when unknown (faults.Request).
func (b *Broker) topicIDOf(topic string) [16]byte {
	id, _ := b.TopicID(topic)
	return id
}

// serveFaults is dispatch with faults set: the first fault that fires
// acts (faults.Armed.Serve), dispatching through the handler what it
// leaves to it.
func (b *Broker) serveFaults(ctx context.Context, req *protocol.Request, a *api, active faults.Active) protocol.Reply {
	if req.Conn == nil || !req.Conn.FromNetwork() {
		// The embedding program's own requests (the control API's
		// inspection and seeding) are not a client under test.
		return b.dispatch(ctx, req, a)
	}
	rq := &faults.Request{Key: req.Key, Version: req.Version, ClientID: req.ClientID,
		Listener: req.Conn.Listener, ConnID: req.Conn.ID, Body: req.Body, TopicID: b.topicIDOf}
	ft := active.Pick(rq)
	if ft == nil {
		return b.dispatch(ctx, req, a)
	}
	b.logReq(levelFault, req, "fault fired", "fault", ft.ID())
	var own protocol.Reply
	ans := ft.Serve(ctx, rq, func(ctx context.Context, body kmsg.Request) faults.Answer {
		r := req
		if body != req.Body { // the part of a produce the fault leaves
			sub := *req
			sub.Body = body
			r = &sub
		}
		own = b.dispatch(ctx, r, a)
		return faults.Answer{Response: own.Response, Wait: own.Wait, Err: own.Err}
	}, req.Conn.Close)
	if ans == nil {
		return own
	}
	return protocol.Reply{Response: ans.Response, Wait: ans.Wait, Err: ans.Err}
}

// partitionFault is the error code an injected fault gives the partition
// in a Fetch, ListOffsets or OffsetForLeaderEpoch, 0 when none.
func partitionFault(ctx context.Context, topic string, partition int32) int16 {
	return faults.PartitionCode(ctx, topic, partition)
}

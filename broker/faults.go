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
// acts.
func (b *Broker) serveFaults(ctx context.Context, req *protocol.Request, a *api, active faults.Active) protocol.Reply {
	if req.Conn == nil || !req.Conn.FromNetwork() {
		// The embedding program's own requests (the control API's
		// inspection and seeding) are not a client under test.
		return b.dispatch(ctx, req, a)
	}
	ft := active.Pick(&faults.Request{Key: req.Key, Version: req.Version, ClientID: req.ClientID,
		Listener: req.Conn.Listener, ConnID: req.Conn.ID, Body: req.Body, TopicID: b.topicIDOf})
	if ft == nil {
		return b.dispatch(ctx, req, a)
	}
	f := ft.Fault()
	b.logReq(levelFault, req, "fault fired", "fault", ft.ID())
	if f.DropBefore {
		req.Conn.Close()
		return protocol.Reply{Err: faults.ErrDrop}
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
		reply = b.dispatch(faults.WithPartition(ctx, f), req, a)
	case f.ErrorCode != 0:
		reply = protocol.Reply{Response: faults.Response(req.Body, f.ErrorCode)}
		if faults.IsAcks0(req.Body) {
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
	if reply.Err != nil || (reply.Response == nil && reply.Wait == nil) || !ft.ShapesAnswer() {
		return reply
	}
	answer := reply.Wait
	if answer == nil {
		resp := reply.Response
		answer = func() (kmsg.Response, error) { return resp, nil }
	}
	return protocol.Reply{Wait: ft.Around(ctx, answer, req.Conn.Close)}
}

// partitionFault is the error code an injected fault gives the partition
// in a Fetch, ListOffsets or OffsetForLeaderEpoch, 0 when none.
func partitionFault(ctx context.Context, topic string, partition int32) int16 {
	return faults.PartitionCode(ctx, topic, partition)
}

// splitProduce serves a produce request whose fault names one topic (and
// maybe a partition): the partitions it names get its code and are not
// written; the others are handled as usual (faults.SplitProduce).
func (b *Broker) splitProduce(ctx context.Context, req *protocol.Request, a *api, f *Fault) protocol.Reply {
	r := req.Body.(*kmsg.ProduceRequest)
	id, _ := b.TopicID(f.Topic)
	keep, hit := faults.SplitProduce(r, f, id)
	if keep == nil {
		if r.Acks == 0 {
			return protocol.Reply{}
		}
		return protocol.Reply{Response: faults.Response(r, f.ErrorCode)}
	}
	sub := *req
	sub.Body = keep
	reply := b.dispatch(ctx, &sub, a)
	switch {
	case reply.Err != nil || r.Acks == 0:
	case reply.Response != nil:
		faults.AddTopics(reply.Response, hit)
	case reply.Wait != nil:
		wait := reply.Wait
		reply.Wait = func() (kmsg.Response, error) {
			resp, err := wait()
			if err == nil {
				faults.AddTopics(resp, hit)
			}
			return resp, err
		}
	}
	return reply
}

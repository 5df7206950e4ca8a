package share

import (
	"time"
)

// recState is an in-flight record's state (Kafka's RecordState).
type recState uint8

const (
	stateAvailable recState = iota // may be acquired (again)
	stateAcquired                  // locked by one member until its deadline
	stateAcked                     // accepted; done
	stateArchived                  // rejected, a gap, or out of delivery attempts; done
)

// maxInFlightWindow bounds SPEO-SPSO in the decoder; the runtime bound is
// group.share.partition.max.record.locks, far below it.
const maxInFlightWindow = 1 << 16

// Acknowledge types (KIP-932, KIP-1222).
const (
	ackGap     int8 = 0
	ackAccept  int8 = 1
	ackRelease int8 = 2
	ackReject  int8 = 3
	ackRenew   int8 = 4
)

type rec struct {
	state    recState
	count    int16
	owner    string
	deadline time.Time
}

// partition is one share-partition: the records of [spso, spso+len(recs))
// are in flight; below spso all are done, from spso+len(recs) (SPEO) on
// none was ever delivered to this group.
type partition struct {
	id   [16]byte
	p    int32
	spso int64
	recs []rec
}

func (sp *partition) speo() int64 { return sp.spso + int64(len(sp.recs)) }

// advance moves SPSO past the done records at the window's start.
func (sp *partition) advance() {
	i := 0
	for i < len(sp.recs) && sp.recs[i].state >= stateAcked {
		i++
	}
	if i > 0 {
		sp.spso += int64(i)
		sp.recs = append(sp.recs[:0], sp.recs[i:]...)
	}
}

// setStart moves SPSO to o, dropping the window (AlterShareGroupOffsets,
// or a log start that passed SPSO).
func (sp *partition) setStart(o int64) {
	if o >= sp.speo() {
		sp.spso, sp.recs = o, sp.recs[:0]
		return
	}
	if o > sp.spso {
		sp.recs = append(sp.recs[:0], sp.recs[o-sp.spso:]...)
		sp.spso = o
	}
}

// release makes an acquired record available again, or archives it once
// it has been delivered limit times.
func (r *rec) release(limit int16) {
	r.owner, r.deadline = "", time.Time{}
	if r.count >= limit {
		r.state = stateArchived
	} else {
		r.state = stateAvailable
	}
}

// expire releases the records whose lock passed; true if any was.
func (sp *partition) expire(now time.Time, limit int16) bool {
	any := false
	for i := range sp.recs {
		r := &sp.recs[i]
		if r.state == stateAcquired && !now.Before(r.deadline) {
			r.release(limit)
			any = true
		}
	}
	if any {
		sp.advance()
	}
	return any
}

// releaseOwner releases every record member holds; true if any was.
func (sp *partition) releaseOwner(member string, limit int16) bool {
	any := false
	for i := range sp.recs {
		r := &sp.recs[i]
		if r.state == stateAcquired && r.owner == member {
			r.release(limit)
			any = true
		}
	}
	if any {
		sp.advance()
	}
	return any
}

// acquiredRange is consecutive offsets acquired with one delivery count.
type acquiredRange struct {
	first, last int64
	count       int16
}

// acquire locks up to max records for member: first the available ones in
// the window, then new ones up to hwm while the window stays under
// maxLocks. Records past limit deliveries were archived on release, so
// every available record may be delivered once more.
func (sp *partition) acquire(member string, hwm int64, max, maxLocks int, deadline time.Time) []acquiredRange {
	var out []acquiredRange
	add := func(o int64, count int16) {
		if n := len(out); n > 0 && out[n-1].last == o-1 && out[n-1].count == count {
			out[n-1].last = o
			return
		}
		out = append(out, acquiredRange{o, o, count})
	}
	got := 0
	for i := range sp.recs {
		if got >= max {
			return out
		}
		r := &sp.recs[i]
		if r.state != stateAvailable {
			continue
		}
		o := sp.spso + int64(i)
		if o >= hwm {
			break
		}
		r.state, r.owner, r.deadline = stateAcquired, member, deadline
		r.count++
		add(o, r.count)
		got++
	}
	for got < max && sp.speo() < hwm && len(sp.recs) < maxLocks {
		o := sp.speo()
		sp.recs = append(sp.recs, rec{state: stateAcquired, owner: member, deadline: deadline, count: 1})
		add(o, 1)
		got++
	}
	return out
}

// checkAck validates one acknowledgement batch for member: every offset
// in range, in the window and acquired by member (renew: also still
// locked). It returns the Kafka error code, 0 when fine.
func (sp *partition) checkAck(member string, first, last int64) int16 {
	if first < sp.spso || last >= sp.speo() {
		return codeInvalidRecordState
	}
	for o := first; o <= last; o++ {
		r := &sp.recs[o-sp.spso]
		if r.state != stateAcquired || r.owner != member {
			return codeInvalidRecordState
		}
	}
	return 0
}

// ack applies one validated batch; types has one entry for the whole
// range or one per offset.
func (sp *partition) ack(first, last int64, types []int8, limit int16, renewUntil time.Time) {
	for o := first; o <= last; o++ {
		t := types[0]
		if len(types) > 1 {
			t = types[o-first]
		}
		r := &sp.recs[o-sp.spso]
		switch t {
		case ackAccept:
			r.state, r.owner, r.deadline = stateAcked, "", time.Time{}
		case ackRelease:
			r.release(limit)
		case ackReject, ackGap:
			r.state, r.owner, r.deadline = stateArchived, "", time.Time{}
		case ackRenew:
			r.deadline = renewUntil
		}
	}
	sp.advance()
}

// runs is the window as stored: acquired records are stored as
// available, since a lock does not survive a restart (its delivery count
// does).
func (sp *partition) runs() []run {
	var out []run
	for _, r := range sp.recs {
		st := r.state
		if st == stateAcquired {
			st = stateAvailable
		}
		if n := len(out); n > 0 && out[n-1].state == st && out[n-1].count == r.count {
			out[n-1].n++
			continue
		}
		out = append(out, run{n: 1, state: st, count: r.count})
	}
	return out
}

// restore rebuilds the window from stored runs.
func (sp *partition) restore(spso int64, runs []run) {
	sp.spso = spso
	sp.recs = sp.recs[:0]
	for _, r := range runs {
		for range r.n {
			sp.recs = append(sp.recs, rec{state: r.state, count: r.count})
		}
	}
	sp.advance()
}

// inFlight counts the records not yet done (for describe's lag).
func (sp *partition) inFlight() int64 {
	var n int64
	for _, r := range sp.recs {
		if r.state < stateAcked {
			n++
		}
	}
	return n
}

// unacquire undoes an acquisition that was never delivered: the records
// are available again with the delivery count they had.
func (sp *partition) unacquire(first, last int64) {
	for o := max(first, sp.spso); o <= last && o < sp.speo(); o++ {
		r := &sp.recs[o-sp.spso]
		if r.state == stateAcquired {
			r.state, r.owner, r.deadline = stateAvailable, "", time.Time{}
			r.count--
		}
	}
}

// archive marks acquired records first..last done without delivery.
func (sp *partition) archive(first, last int64) {
	for o := max(first, sp.spso); o <= last && o < sp.speo(); o++ {
		r := &sp.recs[o-sp.spso]
		if r.state == stateAcquired {
			r.state, r.owner, r.deadline = stateArchived, "", time.Time{}
		}
	}
}

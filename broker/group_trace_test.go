package broker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// groupTracer wraps the broker's handler and records every group request
// with the time it arrived and the time its answer was ready, so a
// rebalance benchmark can show where the end-to-end time goes.
type groupTracer struct {
	h     protocol.Handler
	start time.Time

	mu    sync.Mutex
	lines []traceLine
}

type traceLine struct {
	conn     uint64
	in, out  time.Duration
	what     string
	member   string
	result   string
	parked   bool
	sequence int
}

func (t *groupTracer) reset() {
	t.mu.Lock()
	t.start = time.Now()
	t.lines = nil
	t.mu.Unlock()
}

func (t *groupTracer) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	in := time.Since(t.start)
	what, member := describeGroupReq(req.Body)
	reply := t.h.Serve(ctx, req)
	if what == "" {
		what = fmt.Sprintf("key %d", req.Key)
	}
	rec := func(resp kmsg.Response, parked bool) {
		t.mu.Lock()
		t.lines = append(t.lines, traceLine{conn: req.Conn.ID, in: in, out: time.Since(t.start), what: what,
			member: member, result: describeGroupResp(resp), parked: parked, sequence: len(t.lines)})
		t.mu.Unlock()
	}
	if reply.Wait == nil {
		rec(reply.Response, false)
		return reply
	}
	wait := reply.Wait
	reply.Wait = func() (kmsg.Response, error) {
		resp, err := wait()
		rec(resp, true)
		return resp, err
	}
	return reply
}

func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && len(id)-i > 5 {
		return id[len(id)-4:]
	}
	return id
}

func describeGroupReq(r kmsg.Request) (what, member string) {
	switch r := r.(type) {
	case *kmsg.FindCoordinatorRequest:
		return "FindCoordinator", ""
	case *kmsg.JoinGroupRequest:
		return "JoinGroup", shortID(r.MemberID)
	case *kmsg.SyncGroupRequest:
		return fmt.Sprintf("SyncGroup g%d", r.Generation), shortID(r.MemberID)
	case *kmsg.HeartbeatRequest:
		return fmt.Sprintf("Heartbeat g%d", r.Generation), shortID(r.MemberID)
	case *kmsg.LeaveGroupRequest:
		return "LeaveGroup", ""
	case *kmsg.OffsetFetchRequest:
		return "OffsetFetch", ""
	case *kmsg.OffsetCommitRequest:
		return "OffsetCommit", shortID(r.MemberID)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return fmt.Sprintf("CGHeartbeat e%d", r.MemberEpoch), shortID(r.MemberID)
	}
	return "", ""
}

func describeGroupResp(r kmsg.Response) string {
	code := func(c int16) string {
		if c == 0 {
			return "ok"
		}
		return kerr.ErrorForCode(c).Error()[:min(24, len(kerr.ErrorForCode(c).Error()))]
	}
	switch r := r.(type) {
	case *kmsg.JoinGroupResponse:
		return fmt.Sprintf("%s gen %d id %s leader=%v members=%d", code(r.ErrorCode), r.Generation, shortID(r.MemberID), r.LeaderID == r.MemberID && r.MemberID != "", len(r.Members))
	case *kmsg.SyncGroupResponse:
		return fmt.Sprintf("%s %d bytes", code(r.ErrorCode), len(r.MemberAssignment))
	case *kmsg.HeartbeatResponse:
		return code(r.ErrorCode)
	case *kmsg.ConsumerGroupHeartbeatResponse:
		n := -1
		if r.Assignment != nil {
			n = 0
			for _, t := range r.Assignment.Topics {
				n += len(t.Partitions)
			}
		}
		return fmt.Sprintf("%s id %s epoch %d assigned %d", code(r.ErrorCode), shortID(deref(r.MemberID)), r.MemberEpoch, n)
	case *kmsg.FindCoordinatorResponse:
		return "ok"
	}
	return ""
}

// firstGroupRequest is when the broker saw the first group request
// (FindCoordinator included) since the last reset.
func (t *groupTracer) firstGroupRequest() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := time.Duration(-1)
	for _, l := range t.lines {
		if strings.HasPrefix(l.what, "key ") {
			continue
		}
		if first < 0 || l.in < first {
			first = l.in
		}
	}
	return max(first, 0)
}

func (t *groupTracer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sb strings.Builder
	for _, l := range t.lines {
		p := " "
		if l.parked {
			p = "P"
		}
		fmt.Fprintf(&sb, "%7.1f→%7.1f ms %s conn %2d %-18s %-5s %s\n", float64(l.in.Microseconds())/1000, float64(l.out.Microseconds())/1000, p, l.conn, l.what, l.member, l.result)
	}
	return sb.String()
}

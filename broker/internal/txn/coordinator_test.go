package txn

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/vfs"
)

// The coordinator's tests here need no partition: the broker's own tests
// (broker/txn_test.go and its neighbours) drive transactions over real
// partitions and a real client.

// noPartitions is a broker without topics.
type noPartitions struct{}

func (noPartitions) ByID([16]byte, int32) Partition    { return nil }
func (noPartitions) ByName(string, int32) Partition    { return nil }
func (noPartitions) TopicName([16]byte) (string, bool) { return "", false }
func (noPartitions) Internal(string) bool              { return false }

// pidCounter issues producer IDs from a counter; it also stands in for
// the group coordinator, which these tests never reach.
type pidCounter struct{ n atomic.Int64 }

func (c *pidCounter) Allocate() (int64, error) { return c.n.Add(1), nil }

func (*pidCounter) ValidateTxnCommit(*kmsg.TxnOffsetCommitRequest, int16) int16 { return 0 }
func (*pidCounter) CommitTopic(bool, string, [16]byte) CommitTopic              { return nil }
func (*pidCounter) CommitTransactionalOffsets(string, []groupstore.Commit) error {
	return nil
}

// open starts a coordinator over the transaction log in dir of fsys.
func open(t *testing.T, fsys vfs.FS, dir string, pids *pidCounter) *Coordinator {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tl, err := OpenLog(fsys, dir, true, logger)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Log: tl, Partitions: noPartitions{}, ProducerIDs: pids, Groups: pids, Now: time.Now, Logger: logger})
	if err != nil {
		tl.Close()
		t.Fatal(err)
	}
	return c
}

func initID(t *testing.T, c *Coordinator, id string) (int64, int16) {
	t.Helper()
	pid, epoch, code, err := c.InitProducerID(id, 1000, -1, -1, 4)
	if code != 0 {
		t.Fatalf("init %s: %v %v", id, kerr.ErrorForCode(code), err)
	}
	return pid, epoch
}

// A transactional ID idle past transactional.id.expiration.ms is removed,
// durably; an open transaction past its timeout is aborted instead.
func TestIDExpires(t *testing.T) {
	mem := vfs.NewMem()
	pids := &pidCounter{}
	c := open(t, mem, "/d", pids)
	initID(t, c, "old")
	initID(t, c, "fresh")
	ts := c.get("old")
	ts.mu.Lock()
	ts.updated = time.Now().Add(-IDExpiry - time.Hour)
	ts.mu.Unlock()
	c.abortTimedOut()
	if c.get("old") != nil || c.get("fresh") == nil {
		t.Fatal("expiry removed the wrong IDs")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, mem, "/d", pids)
	defer c.Close()
	for _, tc := range []struct {
		id    string
		want  error
		state string
	}{{"old", kerr.TransactionalIDNotFound, ""}, {"fresh", nil, "Empty"}} {
		s := kmsg.NewDescribeTransactionsResponseTransactionState()
		s.TransactionalID = tc.id
		c.DescribeTransaction(&s, func(string) bool { return true })
		if err := kerr.ErrorForCode(s.ErrorCode); err != tc.want || s.State != tc.state {
			t.Fatalf("%s after restart: %v %q, want %v %q", tc.id, err, s.State, tc.want, tc.state)
		}
	}
}

// The transaction log is compacted to its live content once it has grown,
// and the compacted generation restores the same state.
func TestLogCompaction(t *testing.T) {
	mem := vfs.NewMem()
	pids := &pidCounter{}
	c := open(t, mem, "/d", pids)
	pid, _ := initID(t, c, "busy")
	ts := c.get("busy")
	base := time.Now().UnixMilli()
	ts.mu.Lock()
	for i := 0; i < 12000; i++ {
		ts.updated = time.UnixMilli(base + int64(i))
		if err := c.persist(ts, false); err != nil {
			t.Fatal(err)
		}
	}
	ts.mu.Unlock()
	if err := c.log.maybeCompact(c.keepAborted); err != nil {
		t.Fatal(err)
	}
	names, err := mem.ReadDir("/d")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != logName(2) {
		t.Fatalf("after compaction: %v, want only %s", names, logName(2))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, mem, "/d", pids)
	defer c.Close()
	in, ok := c.Transaction("busy")
	if !ok || in.ProducerID != pid || in.Updated.UnixMilli() != base+11999 {
		t.Fatalf("after reopen: %+v", in)
	}
}

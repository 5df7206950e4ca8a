package quota

import (
	"errors"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestAlterEntriesAndConn: an invalid entry is refused alone, validate
// only changes nothing, and a connection resolved before a change is
// resolved anew after it, holding fetches to the quota's window.
func TestAlterEntriesAndConn(t *testing.T) {
	m, err := Open(vfs.Default, t.TempDir(), Window{Samples: 11, Size: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	alice, empty := "alice", ""
	entries := []AlterEntry{
		{Parts: []Part{{Type: TypeUser, Name: &empty}}, Ops: []Op{{Key: ConsumerByteRate, Value: 10}}},
		{Parts: []Part{{Type: TypeUser, Name: &alice}}, Ops: []Op{{Key: ConsumerByteRate, Value: 1}, {Key: ConsumerByteRate, Value: 1000}}},
	}
	now := time.Now()
	before := m.Conn(nil, "alice", "c", now)
	if before.Limited(Fetch) || before.FetchMaxBytes(m.Window(), 1<<20) != 1<<20 {
		t.Fatal("a quota before any was set")
	}
	errs, applied, stored := m.AlterEntries(entries, true)
	var inv *InvalidError
	if stored != nil || applied != 0 || !errors.As(errs[0], &inv) || errs[1] != nil || m.On() {
		t.Fatalf("validate only: errs %v, applied %d, stored %v", errs, applied, stored)
	}
	if errs, applied, stored = m.AlterEntries(entries, false); stored != nil || applied != 1 || errs[1] != nil {
		t.Fatalf("alter: errs %v, applied %d, stored %v", errs, applied, stored)
	}
	c := m.Conn(before, "alice", "c", now)
	if c == before || !c.Limited(Fetch) {
		t.Fatal("the connection was not resolved anew after the change")
	}
	if got := c.FetchMaxBytes(m.Window(), 1<<20); got != 10000 {
		t.Fatalf("fetch max bytes %d, want the last value over 10 windows (10000)", got)
	}
	if m.Conn(c, "alice", "c", now) != c {
		t.Fatal("an unchanged connection was resolved again")
	}
}

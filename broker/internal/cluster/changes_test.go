package cluster

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memParts is Partitions over placements in memory, with each Set
// following the current epoch at a log end of 100.
type memParts struct {
	place     map[string][]*Placement
	persisted []string
}

func (m *memParts) Topics() []string {
	var out []string
	for t := range m.place {
		out = append(out, t)
	}
	return out
}

func (m *memParts) Placement(topic string, p int32) *Placement {
	ps := m.place[topic]
	if p < 0 || int(p) >= len(ps) {
		return nil
	}
	return ps[p]
}

func (m *memParts) Set(topic string, p int32, pl *Placement) bool {
	if !pl.Follow(m.place[topic][p], 100) {
		return false
	}
	m.place[topic][p] = pl
	return true
}

func (m *memParts) Persist(topic string) error {
	m.persisted = append(m.persisted, topic)
	return nil
}

func threeNodes(t *testing.T) *State {
	t.Helper()
	cs, err := New([]Node{{ID: 1}, {ID: 2}, {ID: 3}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestFollow(t *testing.T) {
	cur := &Placement{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1, Epoch: 3, Epochs: []EpochStart{{3, 40}}}
	same := cur.Clone()
	if same.Follow(cur, 90) {
		t.Fatal("an unchanged placement reported a change")
	}
	isr := cur.Clone()
	isr.ISR = []int32{1}
	if !isr.Follow(cur, 90) || isr.Epoch != 3 || len(isr.Epochs) != 1 {
		t.Fatalf("ISR change: %+v", isr)
	}
	lead := cur.Clone()
	lead.Leader = 2
	if !lead.Follow(cur, 90) || lead.Epoch != 4 || !slices.Equal(lead.Epochs, []EpochStart{{3, 40}, {4, 90}}) {
		t.Fatalf("leader change: %+v", lead)
	}
	if len(cur.Epochs) != 1 {
		t.Fatal("Follow changed the current placement's epochs")
	}
}

// A node stops and starts again over two topics: it leaves every ISR,
// its leaderships move, only changed topics are persisted, and it leads
// again only where no one did.
func TestSetNodeUp(t *testing.T) {
	cs := threeNodes(t)
	m := &memParts{place: map[string][]*Placement{
		"a": {cs.NewPlacement([]int32{1, 2}), cs.NewPlacement([]int32{2, 3})},
		"b": {cs.NewPlacement([]int32{1})},
		"c": {cs.NewPlacement([]int32{3})},
	}}
	if err := cs.SetNodeUp(m, 1, false, quiet); err != nil {
		t.Fatal(err)
	}
	if pl := m.place["a"][0]; pl.Leader != 2 || !slices.Equal(pl.ISR, []int32{2}) || pl.Epoch != 1 {
		t.Fatalf("a-0 after node 1 stopped: %+v", pl)
	}
	if pl := m.place["b"][0]; pl.Leader != -1 || len(pl.ISR) != 0 {
		t.Fatalf("b-0 after its only replica stopped: %+v", pl)
	}
	if slices.Sort(m.persisted); !slices.Equal(m.persisted, []string{"a", "b"}) {
		t.Fatalf("persisted %v", m.persisted)
	}
	if err := cs.SetNodeUp(m, 1, false, quiet); err != nil || len(m.persisted) != 2 {
		t.Fatalf("stopping a stopped node: %v, persisted %v", err, m.persisted)
	}
	if err := cs.SetNodeUp(m, 9, false, quiet); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}
	if err := cs.SetNodeUp(m, 1, true, quiet); err != nil {
		t.Fatal(err)
	}
	if pl := m.place["a"][0]; pl.Leader != 2 || !slices.Equal(pl.ISR, []int32{1, 2}) {
		t.Fatalf("a-0 after node 1 started: %+v", pl)
	}
	if pl := m.place["b"][0]; pl.Leader != 1 || pl.Epoch != 2 {
		t.Fatalf("b-0 after node 1 started: %+v", pl)
	}
}

func TestElectAndReassignCodes(t *testing.T) {
	cs := threeNodes(t)
	led := func(leader int32, isr ...int32) *Placement {
		return &Placement{Replicas: []int32{1, 2, 3}, ISR: isr, Leader: leader}
	}
	for _, c := range []struct {
		cur     *Placement
		unclean bool
		code    int16
		leader  int32
	}{
		{led(1, 1, 2), false, kerr.ElectionNotNeeded.Code, -1},
		{led(2, 1, 2), false, 0, 1},
		{led(2, 2), false, kerr.PreferredLeaderNotAvailable.Code, -1},
		{led(2, 1, 2), true, kerr.ElectionNotNeeded.Code, -1},
		{led(-1), true, 0, 1},
	} {
		pl, code, _ := cs.Elect(c.cur, c.unclean)
		if code != c.code || (pl == nil) != (c.leader < 0) || (pl != nil && pl.Leader != c.leader) {
			t.Errorf("Elect(%+v, unclean %v) = %+v, %d; want code %d leader %d", c.cur, c.unclean, pl, code, c.code, c.leader)
		}
	}
	cur := led(1, 1, 2, 3)
	for _, c := range []struct {
		cur      *Placement
		replicas []int32
		allowRF  bool
		code     int16
	}{
		{nil, []int32{1}, true, kerr.UnknownTopicOrPartition.Code},
		{cur, nil, true, kerr.NoReassignmentInProgress.Code},
		{cur, []int32{}, true, kerr.InvalidReplicaAssignment.Code},
		{cur, []int32{1, 2}, false, kerr.InvalidReplicationFactor.Code},
		{cur, []int32{1, 1, 2}, true, kerr.InvalidReplicaAssignment.Code},
		{cur, []int32{1, 2, 7}, true, kerr.InvalidReplicaAssignment.Code},
		{cur, []int32{3, 2, 1}, false, 0},
	} {
		if code, msg := cs.CheckReassignment(c.cur, c.replicas, c.allowRF); code != c.code {
			t.Errorf("CheckReassignment(%v, allowRF %v) = %d %q, want %d", c.replicas, c.allowRF, code, msg, c.code)
		}
	}
	cs.SetUp(3, false)
	if pl := cs.Reassigned(led(1, 1, 2), []int32{3, 2}); pl.Leader != 2 || !slices.Equal(pl.ISR, []int32{2}) {
		t.Fatalf("reassigned away from the leader: %+v", pl)
	}
}

// ElectLeaders over every partition lists only those elected or failed,
// sorted by topic, and persists the topics that changed.
func TestElectLeadersAll(t *testing.T) {
	cs := threeNodes(t)
	m := &memParts{place: map[string][]*Placement{
		"b": {{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 2}},
		"a": {{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1}, {Replicas: []int32{3}, ISR: []int32{3}, Leader: 3}},
	}}
	r := kmsg.NewPtrElectLeadersRequest()
	r.Topics = nil
	got := cs.ElectLeaders(m, r, quiet)
	if len(got) != 1 || got[0].Topic != "b" || len(got[0].Partitions) != 1 || got[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("answer %+v", got)
	}
	if m.place["b"][0].Leader != 1 || fmt.Sprint(m.persisted) != "[b]" {
		t.Fatalf("b-0 %+v, persisted %v", m.place["b"][0], m.persisted)
	}
}

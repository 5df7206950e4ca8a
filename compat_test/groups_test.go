package compat_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Consumer-group scenarios.

// groupConsumer is a client that consumes as a group member: join group,
// read at least count records (from the earliest offset when the group has
// no commits), commit exactly what it returned, leave.
type groupConsumer interface {
	groupConsume(t *testing.T, topic, group string, count int) ([]rec, error)
}

func init() {
	scenarios = append(scenarios,
		scenario{"group/consume-commit-resume", func(c caps) bool { return c.groups }, scenarioGroupResume},
		scenario{"admin/list-describe-groups", adminOffers("groups"), scenarioAdminGroups},
	)
}

func scenarioGroupResume(t *testing.T, e *env) {
	gc, ok := e.cl.(groupConsumer)
	if !ok {
		t.Fatalf("%s: caps.groups set but no groupConsume", e.name)
	}
	groupResume(t, e, gc, "grp")
}

// groupResume: one member reads at least 5 of 12 records and commits what it
// returned; a second member resumes exactly at the committed offsets.
func groupResume(t *testing.T, e *env, gc groupConsumer, tag string) {
	const parts = 2
	topic := e.topic(tag)
	group := topic + "-g"
	makeTopic(t, e, topic, parts)
	want := expectOffsets(testRecords("grp", parts, 6, 0, false), map[int32]int64{})
	kgoProduce(t, e.addrs, topic, want)

	first, err := gc.groupConsume(t, topic, group, 5)
	if err != nil {
		t.Fatalf("%s first group consume: %v", e.name, err)
	}
	if len(first) < 5 {
		t.Fatalf("%s first group consume returned %d records, want at least 5", e.name, len(first))
	}
	// What the group committed must be exactly the next offset after what
	// the first member returned, per partition.
	next := map[int32]int64{}
	for _, r := range first {
		if r.O+1 > next[r.P] {
			next[r.P] = r.O + 1
		}
	}
	offs, err := refAdmin(t, e.addrs).FetchOffsets(ctxT(t), group)
	if err != nil {
		t.Fatalf("kadm fetch offsets of %s: %v", group, err)
	}
	for p := int32(0); p < parts; p++ {
		o, ok := offs.Lookup(topic, p)
		committed := int64(-1)
		if ok {
			committed = o.At
		}
		if want, read := next[p], next[p] > 0; read && committed != want {
			t.Errorf("%s: group %s committed %d on partition %d, want %d (the offset after the last record read)", e.name, group, committed, p, want)
		}
	}

	rest := len(want) - len(first)
	second, err := gc.groupConsume(t, topic, group, rest)
	if err != nil {
		t.Fatalf("%s resumed group consume: %v", e.name, err)
	}
	// Resume exactly at the committed offsets: no record twice, none lost.
	for p := int32(0); p < parts; p++ {
		for _, r := range second {
			if r.P == p && r.O < next[p] {
				t.Errorf("%s: resumed member re-read p%d@%d below the committed offset %d", e.name, p, r.O, next[p])
				break
			}
		}
	}
	all := append(append([]rec(nil), first...), second...)
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].P != all[j].P {
			return all[i].P < all[j].P
		}
		return all[i].O < all[j].O
	})
	verifyRecords(t, e.name+" group members (first+resumed)", want, all)
}

// scenarioAdminGroups makes a group with committed offsets (kgo) and asks
// the client to list and describe it.
func scenarioAdminGroups(t *testing.T, e *env) {
	a := e.caps.admin
	topic := e.topic("ag")
	group := topic + "-g"
	makeTopic(t, e, topic, 1)
	recs := expectOffsets(testRecords("ag", 1, 3, 0, false), map[int32]int64{})
	kgoProduce(t, e.addrs, topic, recs)
	if _, err := (&kgoClient{e.addrs}).groupConsume(t, topic, group, 3); err != nil {
		t.Fatalf("kgo group consume to create %s: %v", group, err)
	}
	waitFor(t, e.name+" list groups", func() (bool, string) {
		gs, err := a.listGroups(t)
		return err == nil && contains(gs, group), fmt.Sprintf("%v %v", gs, err)
	})
	state, err := a.describeGroup(t, group)
	if err != nil {
		t.Fatalf("%s describe group: %v", e.name, err)
	}
	if state != "Empty" && state != "EMPTY" {
		t.Errorf("%s: group %s state %q after its only member left, want Empty", e.name, group, state)
	}
}

func (c *kgoClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close() // leaves the group
	ctx := ctxT(t)
	var out []rec
	for len(out) < count {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return out, fmt.Errorf("got %d of %d records before timeout", len(out), count)
		}
		if err := fs.Err(); err != nil {
			return out, err
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	}
	return out, cl.CommitUncommittedOffsets(ctx)
}

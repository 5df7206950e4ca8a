package txn

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Info is a transactional ID's state as the coordinator holds it, for
// inspection (tests, tools); DescribeTransactions answers from the same.
type Info struct {
	ID         string
	ProducerID int64
	Epoch      int16
	State      State
	Timeout    time.Duration
	// Start is when the open transaction started; Updated, the last
	// change of state.
	Start, Updated time.Time
	// Partitions counts the partitions of the open transaction; Groups
	// are the groups whose offsets it holds, sorted.
	Partitions int
	Groups     []string
}

// Transaction returns id's state; false when the coordinator has none.
func (c *Coordinator) Transaction(id string) (Info, bool) {
	ts := c.get(id)
	if ts == nil {
		return Info{}, false
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	in := Info{ID: ts.id, ProducerID: ts.pid, Epoch: ts.epoch, State: ts.state, Timeout: ts.timeout,
		Start: ts.start, Updated: ts.updated, Partitions: len(ts.parts)}
	for g := range ts.groups {
		in.Groups = append(in.Groups, g)
	}
	sort.Strings(in.Groups)
	return in, true
}

// PrepareAndStop moves id's open transaction to PrepareCommit (commit) or
// PrepareAbort, durably, writes its marker to the partitions in marked
// only, and stops there: the state a broker that crashed between two
// markers leaves behind. Recovery tests start from it; nothing else calls
// it.
func (c *Coordinator) PrepareAndStop(id string, commit bool, marked []Partition) error {
	ts := c.get(id)
	if ts == nil {
		return fmt.Errorf("no transactional ID %q", id)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.state != Ongoing {
		return fmt.Errorf("transaction %q is %s, not Ongoing", id, ts.state)
	}
	ts.state = PrepareAbort
	if commit {
		ts.state = PrepareCommit
	}
	if err := c.persist(ts, true); err != nil {
		return err
	}
	for _, p := range marked {
		end, err := c.writeMarker(p, ts.pid, ts.epoch, commit, c.now())
		if err != nil {
			return err
		}
		if err := p.WaitDurable(context.Background(), end); err != nil {
			return err
		}
	}
	return nil
}

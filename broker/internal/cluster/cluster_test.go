package cluster

import (
	"slices"
	"testing"
)

func TestAssignReplicasSpread(t *testing.T) {
	for _, tc := range []struct {
		name  string
		racks []string
		rf    int
		even  bool // replicas spread evenly (not with uneven racks: each partition needs the lone rack's node)
	}{
		{"no racks", []string{"", "", "", "", ""}, 3, true},
		{"a rack each", []string{"a", "b", "c"}, 3, true},
		{"two per rack", []string{"a", "a", "b", "b", "c", "c"}, 3, true},
		{"uneven racks", []string{"a", "a", "a", "b"}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []Node
			for i, r := range tc.racks {
				nodes = append(nodes, Node{ID: int32(10 + i), Rack: r})
			}
			cs, err := New(nodes)
			if err != nil {
				t.Fatal(err)
			}
			const parts = 60
			place := cs.AssignReplicas("topic", 0, parts, tc.rf)
			leaders := map[int32]int{}
			replicas := map[int32]int{}
			racks := map[string]bool{}
			for _, r := range tc.racks {
				racks[r] = true
			}
			for p, rs := range place {
				if len(rs) != tc.rf {
					t.Fatalf("partition %d: %v, want %d replicas", p, rs, tc.rf)
				}
				seenRack := map[string]bool{}
				for i, r := range rs {
					if slices.Contains(rs[:i], r) {
						t.Fatalf("partition %d: %v repeats a node", p, rs)
					}
					replicas[r]++
					seenRack[cs.Rack(r)] = true
				}
				if tc.racks[0] != "" && len(seenRack) < min(tc.rf, len(racks)) {
					t.Fatalf("partition %d: %v spans racks %v, want %d", p, rs, seenRack, min(tc.rf, len(racks)))
				}
				leaders[rs[0]]++
			}
			for _, n := range nodes {
				// Every node leads and holds its share, within one.
				if l := leaders[n.ID]; l < parts/len(nodes)-1 || l > parts/len(nodes)+1 {
					t.Fatalf("node %d leads %d of %d partitions: %v", n.ID, l, parts, leaders)
				}
				if r := replicas[n.ID]; tc.even && (r < parts*tc.rf/len(nodes)-2 || r > parts*tc.rf/len(nodes)+2) {
					t.Fatalf("node %d holds %d replicas: %v", n.ID, r, replicas)
				}
			}
		})
	}
}

func TestEpochEnd(t *testing.T) {
	pl := &Placement{Epoch: 5, Epochs: []EpochStart{{0, 0}, {1, 100}, {3, 250}, {5, 400}}}
	for _, tc := range []struct {
		ask       int32
		epoch     int32
		endOffset int64
	}{
		{-1, -1, -1}, // undefined
		{6, -1, -1},  // newer than the current one
		{5, 5, 900},  // the current one ends at the log end
		{4, 3, 400},  // no batch in 4: epoch 3 ended where 5 began
		{3, 3, 400},
		{2, 1, 250},
		{1, 1, 250},
		{0, 0, 100},
	} {
		e, end := pl.EpochEnd(tc.ask, 900)
		if e != tc.epoch || end != tc.endOffset {
			t.Errorf("epochEnd(%d) = %d, %d; want %d, %d", tc.ask, e, end, tc.epoch, tc.endOffset)
		}
	}
	// The history starts later (older epochs were never this node's).
	pl = &Placement{Epoch: 3, Epochs: []EpochStart{{2, 50}, {3, 80}}}
	if e, end := pl.EpochEnd(1, 90); e != 1 || end != 50 {
		t.Errorf("epochEnd(1) before the history = %d, %d; want 1, 50", e, end)
	}
	if got := pl.EpochAt(60); got != 2 {
		t.Errorf("epochAt(60) = %d, want 2", got)
	}
}

// TestCoordSlotJavaHash: coordinator slots follow Kafka's
// abs(String.hashCode) % 50, so a group lands where Kafka's would.
func TestCoordSlotJavaHash(t *testing.T) {
	// Values of Java's String.hashCode.
	for s, want := range map[string]int32{"": 0, "group": 98629247, "a": 97, "Aa": 2112, "BB": 2112, "\U0001F600": 1772899} {
		if got := JavaStringHash(s); got != want {
			t.Errorf("JavaStringHash(%q) = %d, want %d", s, got, want)
		}
	}
	if got := Slot("group"); got != 98629247%50 {
		t.Errorf(`Slot("group") = %d, want %d`, got, 98629247%50)
	}
}

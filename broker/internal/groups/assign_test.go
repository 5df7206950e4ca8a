package groups

import "testing"

// TestAssignors: range and uniform give every partition of a subscribed
// topic to exactly one subscribed member; uniform balances and keeps
// partitions where they were when a member leaves.
func TestAssignors(t *testing.T) {
	subs := map[string][]string{"a": {"x", "y"}, "b": {"x"}, "c": {"x", "y"}}
	parts := map[string]int32{"x": 7, "y": 3}
	check := func(name string, out map[string]assignment) {
		t.Helper()
		seen := map[string]map[int32]string{}
		for id, a := range out {
			for topic, ps := range a {
				for _, p := range ps {
					if seen[topic] == nil {
						seen[topic] = map[int32]string{}
					}
					if prev, dup := seen[topic][p]; dup {
						t.Fatalf("%s: %s-%d given to %s and %s", name, topic, p, prev, id)
					}
					seen[topic][p] = id
					if topic == "y" && id == "b" {
						t.Fatalf("%s: b got y without subscribing", name)
					}
				}
			}
		}
		for topic, n := range parts {
			if int32(len(seen[topic])) != n {
				t.Fatalf("%s: topic %s has %d of %d partitions assigned", name, topic, len(seen[topic]), n)
			}
		}
	}
	r := assignRange(subs, parts)
	check("range", r)
	if got := r["a"]["x"]; len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("range a.x = %v", got)
	}
	u := assignUniform(subs, parts, nil)
	check("uniform", u)
	for id, a := range u {
		n := 0
		for _, ps := range a {
			n += len(ps)
		}
		if n < 3 || n > 4 {
			t.Fatalf("uniform: %s has %d partitions: %v", id, n, u)
		}
	}
	// Sticky: removing a member moves only its partitions.
	delete(subs, "c")
	u2 := assignUniform(subs, parts, u)
	check("uniform after leave", u2)
	for _, id := range []string{"a", "b"} {
		for topic, ps := range u[id] {
			for _, p := range ps {
				if !contains(u2[id], topic, p) {
					t.Fatalf("uniform moved %s-%d away from %s", topic, p, id)
				}
			}
		}
	}
}

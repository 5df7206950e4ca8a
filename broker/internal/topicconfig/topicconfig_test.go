package topicconfig

import (
	"testing"
)

// cleanup.policy is a list: items are matched whole, trimmed and without
// case, and an unset policy is Kafka's default, delete.
func TestCleanupPolicy(t *testing.T) {
	for pol, want := range map[string][2]bool{ // compacts, deletes
		"":                  {false, true},
		"delete":            {false, true},
		"compact":           {true, false},
		"delete,compact":    {true, true},
		" Compact , delete": {true, true},
		"compacted":         {false, false},
		"DELETE":            {false, true},
	} {
		set := map[string]string{}
		if pol != "" {
			set["cleanup.policy"] = pol
		}
		cfg := &Config{Set: set}
		if got := [2]bool{cfg.Compacts(), cfg.Deletes()}; got != want {
			t.Errorf("%q: compacts, deletes = %v, want %v", pol, got, want)
		}
	}
}

// Package durability names the one fsync policy that every store of the
// broker follows (partition logs, committed offsets, transaction state,
// spools), so that a single -durability setting means the same thing for
// all of them.
package durability

import (
	"fmt"
	"strings"
	"time"
)

// Mode says when written data is fsynced.
type Mode int

const (
	// Never leaves writeback to the OS: a process crash loses nothing that
	// was written, a machine crash may.
	Never Mode = iota
	// Interval fsyncs at most every Policy.Interval (Kafka's flush.ms).
	Interval
	// Always acknowledges data only after it is fsynced; concurrent writers
	// share one fsync (group commit).
	Always
)

// Policy is a durability mode with its interval.
type Policy struct {
	Mode     Mode
	Interval time.Duration
}

// Parse parses "always", "never" or "interval=100ms".
func Parse(s string) (Policy, error) {
	switch {
	case s == "always":
		return Policy{Mode: Always}, nil
	case s == "never":
		return Policy{Mode: Never}, nil
	case strings.HasPrefix(s, "interval="):
		d, err := time.ParseDuration(strings.TrimPrefix(s, "interval="))
		if err != nil || d <= 0 {
			return Policy{}, fmt.Errorf("bad sync interval in %q (want a positive duration such as interval=100ms)", s)
		}
		return Policy{Mode: Interval, Interval: d}, nil
	}
	return Policy{}, fmt.Errorf("unknown durability policy %q (want always, never or interval=D)", s)
}

func (p Policy) String() string {
	switch p.Mode {
	case Always:
		return "always"
	case Interval:
		return "interval=" + p.Interval.String()
	}
	return "never"
}

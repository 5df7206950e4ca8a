// Package topicname checks Kafka topic names. Both the broker (every
// request naming a topic) and the uplink (upstream prefixes, the
// checkpoints topic) apply the same rules, so they live here once.
package topicname

import (
	"errors"
	"fmt"
)

// MaxLen is Kafka's limit (249: 255 minus room for the partition suffix
// and a marker Kafka appends on deletion).
const MaxLen = 249

// Validate applies Kafka's Topic.validate rules.
func Validate(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name cannot be %q", name)
	case len(name) > MaxLen:
		return fmt.Errorf("topic name is longer than %d characters", MaxLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %q contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

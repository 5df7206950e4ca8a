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

// Validate applies Kafka's Topic.validate rules, with its messages (what
// Kafka 4.4's CreateTopics answers).
func Validate(name string) error {
	switch {
	case name == "":
		return errors.New("Topic name is invalid: the empty string is not allowed")
	case name == "." || name == "..":
		return fmt.Errorf("Topic name is invalid: '%s' is not allowed", name)
	case len(name) > MaxLen:
		return fmt.Errorf("Topic name is invalid: the length of '%s' is longer than the max allowed length %d", name, MaxLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("Topic name is invalid: '%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

package uplink

import (
	"strings"
	"testing"
)

// A checkpoint whose group, topic or metadata does not fit MM2's int16
// string lengths is refused, not written truncated; one that fits to the
// byte is written.
func TestCheckpointRecordStringLimits(t *testing.T) {
	longest := strings.Repeat("m", 1<<15-1)
	if _, ok := checkpointRecord("edge.checkpoints.internal", "g", "t", 0, 1, 2, longest); !ok {
		t.Fatal("metadata of 32767 bytes refused")
	}
	for _, c := range []struct{ group, topic, meta string }{
		{"g", "t", longest + "m"},
		{longest + "g", "t", ""},
		{"g", longest + "t", ""},
	} {
		if _, ok := checkpointRecord("edge.checkpoints.internal", c.group, c.topic, 0, 1, 2, c.meta); ok {
			t.Errorf("group %d, topic %d, metadata %d bytes: accepted", len(c.group), len(c.topic), len(c.meta))
		}
	}
}

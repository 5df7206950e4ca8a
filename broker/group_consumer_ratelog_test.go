package broker

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInvalidConsumerHeartbeatFloodLogsBounded: a client sending invalid
// KIP-848 heartbeats in a loop gets INVALID_REQUEST each time, and the
// broker writes a bounded number of lines for them, not one per request.
func TestInvalidConsumerHeartbeatFloodLogsBounded(t *testing.T) {
	logs := &lockedBuf{}
	b := newTestBroker(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	cl := newClient(t, listen(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 500
	for i := range n {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.MemberID, req.MemberEpoch = 1, "m", 0 // no group ID
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("request %d: %v, want INVALID_REQUEST", i, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	if got := strings.Count(logs.String(), "invalid ConsumerGroupHeartbeat"); got < 1 || got > 3 {
		t.Fatalf("%d log lines for %d invalid heartbeats", got, n)
	}
}

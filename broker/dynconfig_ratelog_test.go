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

// A client flooding Metadata for an invalid topic name (librdkafka's
// 0033_regex_subscribe sent 20 000 in 2 s) gets its error every time but
// costs the log a first line and a count, not a line per request.
func TestClientFloodLogsAreRateLimited(t *testing.T) {
	logs := &lockedBuf{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	b := newTestBroker(t, func(c *Config) { c.Logger = log })
	addr := listen(t, b)
	cl := newClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const n = 2000
	for i := range n {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("bad*name")
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if c := resp.Topics[0].ErrorCode; c != kerr.InvalidTopicException.Code {
			t.Fatalf("request %d: %v, want INVALID_TOPIC_EXCEPTION", i, kerr.ErrorForCode(c))
		}
	}
	count := func() int { return strings.Count(logs.String(), "metadata: invalid topic name") }
	// The interval is 10 s; the flood took less, or at most a few lines.
	if got := count(); got < 1 || got > 3 {
		t.Fatalf("%d log lines for %d bad requests:\n%s", got, n, logs.String())
	}
	b.rl.Flush()
	out := logs.String()
	var reported int
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "suppressed="); i >= 0 && strings.Contains(line, "invalid topic name") {
			var k int
			for _, ch := range line[i+len("suppressed="):] {
				if ch < '0' || ch > '9' {
					break
				}
				k = k*10 + int(ch-'0')
			}
			reported += k
		}
	}
	if first := strings.Count(out, "msg=\"metadata: invalid topic name\""); first+reported != n {
		t.Fatalf("%d first lines + %d reported = %d, want %d:\n%s", first, reported, first+reported, n, out)
	}
}

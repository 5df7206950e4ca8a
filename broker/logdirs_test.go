package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

func TestDescribeLogDirs(t *testing.T) {
	dir := t.TempDir()
	b := newTestBroker(t, func(c *Config) { c.FS, c.DataDir = vfs.Default, dir })
	createTopic(t, b, "t", 2)
	produce(t, b, "t", 1, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: make([]byte, 500)}))
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Version = 4
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{{Topic: "t", Partitions: []int32{1, 7}}, {Topic: "nope", Partitions: []int32{0}}}
	resp := serve(t, b, req).(*kmsg.DescribeLogDirsResponse)
	if len(resp.Dirs) != 1 || resp.Dirs[0].Dir != dir || resp.Dirs[0].TotalBytes <= 0 || resp.Dirs[0].UsableBytes < 0 {
		t.Fatalf("dirs: %+v", resp.Dirs)
	}
	ts := resp.Dirs[0].Topics
	if len(ts) != 1 || ts[0].Topic != "t" || len(ts[0].Partitions) != 1 || ts[0].Partitions[0].Partition != 1 || ts[0].Partitions[0].Size < 500 {
		t.Fatalf("topics: %+v", ts)
	}
	// All topics: t's two partitions and the internal offsets topic
	// (there since the first group lookup).
	findGroupCoordinator(t, b)
	req.Topics = nil
	resp = serve(t, b, req).(*kmsg.DescribeLogDirsResponse)
	n := 0
	for _, st := range resp.Dirs[0].Topics {
		n += len(st.Partitions)
	}
	if n != 3 {
		t.Fatalf("%d partitions described, want 3", n)
	}
}

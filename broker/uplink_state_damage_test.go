package broker_test

import (
	"context"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/minikafkatest"
)

// Torn or garbled forwarding state beside a spool (the upstream producer
// journal, the saved producer state, the offset syncs) does not stop the
// broker: it starts, says which file it ignored, and forwards on; only the
// guarantees the file carried are lost (a new upstream producer).
func TestForwardingStateFilesDamaged(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("dmg"), minikafka.WithTopic("dmg", 1),
		minikafka.WithForwardGroupOffsets(50*time.Millisecond))
	ctx := context.Background()
	produce := func(from, to int) {
		t.Helper()
		cl := minikafkatest.Client(t, local.b, kgo.DefaultProduceTopic("dmg"))
		defer cl.Close()
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	drained := func() bool { st := local.b.ForwardStats(); return len(st) == 1 && st[0].Lag == 0 }
	produce(0, 10)
	waitFor(t, 20*time.Second, "first records shipped", drained)
	time.Sleep(200 * time.Millisecond) // a commit and a sync pass write their files

	local.b.Close()
	dirs, err := local.fs.ReadDir("/data/spool")
	if err != nil || len(dirs) != 1 {
		t.Fatalf("spool dir: %v %v", dirs, err)
	}
	names, _ := local.fs.ReadDir(path.Join("/data/spool", dirs[0]))
	damaged := 0
	for _, n := range names {
		if strings.HasSuffix(n, ".upstream-producer") || strings.HasSuffix(n, ".producers") || strings.HasSuffix(n, ".offset-syncs") {
			if err := vfs.WriteFileAtomic(local.fs, path.Join("/data/spool", dirs[0], n), []byte(`{"torn`), 0o644); err != nil {
				t.Fatal(err)
			}
			damaged++
		}
	}
	if damaged != 3 {
		t.Fatalf("found %d of the 3 state files among %v", damaged, names)
	}
	local.start()
	produce(10, 20)
	waitFor(t, 20*time.Second, "records shipped after the restart", drained)
	if st := local.b.ForwardStats()[0]; st.ProducerID < 0 {
		t.Fatalf("no upstream producer after the restart: %+v", st)
	}
	checkUpstream(t, up.addr, "dmg", 1, 20, true)
}

package broker

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// When one store fails to open, New fails naming it and closes what the
// others opened side by side: the group coordinator's and transaction
// coordinator's goroutines do not outlive the failed start, and the
// directory starts cleanly once the damage is gone.
func TestNewFailsCleanly(t *testing.T) {
	for _, c := range []struct {
		file, content, want string
	}{
		{"producer_ids", "short", "producer_ids"},
		{scramFile, `{"version":1,"credentials":[{"user":"x"`, scramFile},
	} {
		t.Run(c.file, func(t *testing.T) {
			mem := vfs.NewMem()
			cfg := Config{DataDir: "/d", FS: mem, NodeID: 1, DefaultPartitions: 1}
			b, err := New(cfg) // a used directory: every store has its files
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()
			if err := vfs.WriteFileAtomic(mem, "/d/"+c.file, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := New(cfg); err == nil {
				b.Close()
				t.Fatal("started on a damaged " + c.file)
			} else if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error does not name %s: %v", c.want, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<16)
				t.Fatalf("%d goroutines after the failed start, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
			if err := mem.Remove("/d/" + c.file); err != nil {
				t.Fatal(err)
			}
			b, err = New(cfg)
			if err != nil {
				t.Fatalf("after removing the damaged file: %v", err)
			}
			b.Close()
		})
	}
}

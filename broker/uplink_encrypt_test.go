package broker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// The spool of a forwarded topic encrypted at rest, end to end: while the
// upstream is down the records wait in the spool and its files hold none
// of their plaintext; a start without the key or with a wrong one fails
// naming the segment; a key rotation keeps the old segments readable;
// once the upstream is back everything is shipped, exactly once.
func TestSpoolEncryptionAtRest(t *testing.T) {
	up := newUpstream(t)
	up.Stop() // records stay in the spool until Start
	var dir string
	key1, key2 := bytes.Repeat([]byte{0x11}, 32), bytes.Repeat([]byte{0x22}, 32)
	start := func(opts ...minikafka.Option) (*minikafka.Broker, error) {
		base := []minikafka.Option{minikafka.WithDataDir(dir), minikafka.WithListenAddr("127.0.0.1:0"),
			minikafka.WithUpstream(up.addr), minikafka.WithForward("edge"), minikafka.WithTopic("edge", 1)}
		return minikafka.Start(context.Background(), append(base, opts...)...)
	}
	// Values are incompressible (random bytes after the counter), sent
	// uncompressed, so unencrypted segments hold them verbatim: the
	// control below checks that the search would find them.
	values := make([][]byte, 100)
	for i := range values {
		values[i] = append([]byte(fmt.Sprintf("secret-plaintext-%04d-", i)), make([]byte, 200)...)
		rand.Read(values[i][22:])
	}
	produce := func(b *minikafka.Broker, from, to int) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("edge"), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: values[i]}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	spoolFiles := func() map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(filepath.Join(dir, "spool"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				out[p] = b
			}
			return nil
		})
		return out
	}
	leaked := func() string {
		for p, data := range spoolFiles() {
			for _, v := range values {
				if bytes.Contains(data, v[22:54]) {
					return p
				}
			}
		}
		return ""
	}

	// Control: without a key the spool holds the values as they came.
	dir = t.TempDir()
	b, err := start()
	if err != nil {
		t.Fatal(err)
	}
	produce(b, 0, 10)
	b.Close()
	if leaked() == "" {
		t.Fatal("control: values not found in an unencrypted spool")
	}

	dir = t.TempDir()

	b, err = start(minikafka.WithSpoolEncryptionKey(key1))
	if err != nil {
		t.Fatal(err)
	}
	produce(b, 0, 50)
	st := b.ForwardStats()
	if len(st) != 1 || st[0].Encryption != "AES-256-GCM" || st[0].KeyID == "" || st[0].Lag != 50 {
		t.Fatalf("forward stats: %+v", st)
	}
	b.Close()
	files := spoolFiles()
	if p := leaked(); p != "" || len(files) == 0 {
		t.Fatalf("plaintext in the spool file %s", p)
	}
	segs := 0
	for p, data := range files {
		if bytes.Contains(data, []byte("secret-plaintext")) {
			t.Fatalf("plaintext in the spool file %s", p)
		}
		if strings.HasSuffix(p, ".seg") {
			segs++
		}
	}
	if segs == 0 {
		t.Fatalf("no spool segment written: %v", files)
	}

	// No key, a wrong key: the start fails naming a segment file.
	for name, opts := range map[string][]minikafka.Option{
		"no key":    nil,
		"wrong key": {minikafka.WithSpoolEncryptionKey(key2)},
	} {
		b, err := start(opts...)
		if err == nil {
			b.Close()
			t.Fatalf("%s: started", name)
		}
		if !strings.Contains(err.Error(), ".seg") || !strings.Contains(err.Error(), "spool") {
			t.Fatalf("%s: error names no segment: %v", name, err)
		}
	}

	// Rotation: key2 seals new segments, key1 still opens the old ones.
	b, err = start(minikafka.WithSpoolEncryptionKey(key2, key1))
	if err != nil {
		t.Fatal(err)
	}
	produce(b, 50, 100)
	b.Close()
	if _, err := start(minikafka.WithSpoolEncryptionKey(key1)); err == nil || !strings.Contains(err.Error(), "wrong key") {
		t.Fatalf("old key alone after rotation: %v", err)
	}

	// The upstream returns: all 100 records shipped once, in order.
	up.Start()
	b, err = start(minikafka.WithSpoolEncryptionKey(key2, key1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := readAll(t, up.addr, "edge", 1, 100, 20*time.Second)[0]
	if len(got) != 100 {
		t.Fatalf("upstream has %d records", len(got))
	}
	for i, r := range got {
		if !bytes.Equal(r.Value, values[i]) {
			t.Fatalf("upstream record %d: %q", i, r.Value)
		}
	}
	if extra := readAll(t, up.addr, "edge", 1, 101, 500*time.Millisecond)[0]; len(extra) != 100 {
		t.Fatalf("duplicates upstream: %d", len(extra))
	}
}

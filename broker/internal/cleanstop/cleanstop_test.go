package cleanstop

import (
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// The marker round-trips its listings through a real file; a listing
// that cannot be written (a tab in a name) is left out; a damaged
// checksum or an older header is still a clean shutdown, without
// listings; Drop removes it durably and a missing one is no error.
func TestMarker(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	listings := map[string][]string{
		Key("/data", "/data/topics/ab/0"): {"00000000000000000000.log", "00000000000000000000.index"},
		"topics/ab/1":                     {},
		"topics/bad\tname/0":              {"x"},
	}
	if err := Mark(mem, "/data", listings); err != nil {
		t.Fatal(err)
	}
	clean, got, err := Take(mem.CrashClone(), "/data", log)
	if err != nil || !clean {
		t.Fatalf("Take: %v %v", clean, err)
	}
	delete(listings, "topics/bad\tname/0")
	if !slices.Equal(slices.Sorted(maps.Keys(got)), []string{"topics/ab/0", "topics/ab/1"}) ||
		!slices.Equal(got["topics/ab/0"], listings["topics/ab/0"]) || len(got["topics/ab/1"]) != 0 {
		t.Fatalf("listings %q, want %q", got, listings)
	}

	data := encodeCleanMarker(listings)
	data[len(data)-3] ^= 1
	if l, err := decodeCleanMarker(data); err == nil || l != nil {
		t.Fatalf("damaged marker: %v %v", l, err)
	}
	if l, err := decodeCleanMarker([]byte("minikafka clean shutdown\n")); err != nil || l != nil {
		t.Fatalf("older marker: %v %v", l, err)
	}
	if err := vfs.WriteFileAtomic(mem, "/data/"+File, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if clean, got, err := Take(mem, "/data", log); !clean || got != nil || err != nil {
		t.Fatalf("Take of a damaged marker: %v %v %v", clean, got, err)
	}

	if err := Drop(mem, "/data"); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CrashClone().Stat("/data/" + File); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker durable after Drop: %v", err)
	}
	if clean, _, err := Take(mem, "/data", log); clean || err != nil {
		t.Fatalf("Take without a marker: %v %v", clean, err)
	}
	if err := Drop(mem, "/data"); err != nil {
		t.Fatalf("Drop without a marker: %v", err)
	}
}

// The marker's listings survive encoding, and no marker content makes
// decoding panic or return listings whose checksum does not hold.
func FuzzDecodeCleanMarker(f *testing.F) {
	f.Add(encodeCleanMarker(map[string][]string{"topics/a/0": {"00000000000000000000.log", "logstart"}, "topics/a/1": {}}))
	f.Add([]byte("minikafka clean shutdown\n"))
	f.Add([]byte("minikafka clean shutdown 2\ncrc32c 00000000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		listings, err := decodeCleanMarker(data)
		if err != nil && listings != nil {
			t.Fatal("listings returned with an error")
		}
		if listings == nil {
			return
		}
		again, err := decodeCleanMarker(encodeCleanMarker(listings))
		if err != nil {
			t.Fatal(err)
		}
		for dir, names := range listings {
			if strings.ContainsAny(dir, "\t\n") {
				continue
			}
			if !slices.Equal(again[dir], names) {
				t.Fatalf("%q: %q after a round trip, want %q", dir, again[dir], names)
			}
		}
	})
}

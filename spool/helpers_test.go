package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

var testKey = bytes.Repeat([]byte{0x42}, 32)

func testCipher(t testing.TB) Cipher {
	t.Helper()
	c, err := NewAESGCM(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openT opens a spool and closes it at cleanup (a second Close is harmless).
func openT(t testing.TB, o Options) (*Spool, *RecoveryReport) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = "spool"
	}
	s, rep, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rep
}

// rec is the deterministic content of the record at seq (so any reader can
// check any record without shared state).
func rec(seq int64, n int) []byte {
	b := fmt.Appendf(nil, "record-%d|", seq)
	for len(b) < n {
		b = append(b, byte('a'+seq%26))
	}
	return b
}

// files lists dir in fs.
func files(t testing.TB, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func filesWithSuffix(t testing.TB, fs vfs.FS, dir, suffix string) []string {
	var out []string
	for _, n := range files(t, fs, dir) {
		if strings.HasSuffix(n, suffix) {
			out = append(out, n)
		}
	}
	return out
}

func readAll(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeAll(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fs.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
}

// readAllRecords reads everything from seq on, failing on any error.
func readAllRecords(t testing.TB, s *Spool, seq int64) []Record {
	t.Helper()
	var out []Record
	for {
		recs, err := s.ReadFrom(seq, 1000)
		if err != nil {
			t.Fatalf("ReadFrom(%d): %v", seq, err)
		}
		if len(recs) == 0 {
			return out
		}
		out = append(out, recs...)
		seq = recs[len(recs)-1].Last() + 1
	}
}

// eventually polls cond for up to 5 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func mustErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

package broker

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (w, r net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	w, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); r.Close() })
	return w, r
}

// Concurrent ranges of one shared descriptor, larger than the socket
// buffer (so sendfile meets EAGAIN and waits), arrive intact and leave the
// file position alone, on the sendfile path (TCP) and the copying path; a
// range past the end of the file is io.ErrUnexpectedEOF on both.
func TestSendRange(t *testing.T) {
	data := make([]byte, 8<<20)
	rand.NewChaCha8([32]byte{1}).Read(data)
	name := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := vfs.Default.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	ranges := [][2]int64{{0, 3 << 20}, {123, 5 << 20}, {8<<20 - 10, 10}, {4 << 20, 1}}
	before := sendfileRanges.Load()
	var wg sync.WaitGroup
	for _, r := range ranges {
		w, rd := tcpPair(t)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer w.Close()
			if err := sendRange(w, logstore.Range{File: f, Pos: r[0], Len: r[1]}); err != nil {
				t.Errorf("range %v: %v", r, err)
			}
		}()
		go func() {
			defer wg.Done()
			got, err := io.ReadAll(rd)
			if err != nil {
				t.Errorf("range %v: read: %v", r, err)
			} else if !bytes.Equal(got, data[r[0]:r[0]+r[1]]) {
				t.Errorf("range %v: got %d bytes, differing", r, len(got))
			}
		}()
	}
	wg.Wait()
	if runtime.GOOS == "linux" {
		if d := sendfileRanges.Load() - before; d != int64(len(ranges)) {
			t.Fatalf("%d of %d ranges went out with sendfile", d, len(ranges))
		}
	}
	if pos, _ := f.(vfs.OSFile).OS().Seek(0, io.SeekCurrent); pos != 0 {
		t.Fatalf("file position moved to %d", pos)
	}
	w, _ := tcpPair(t)
	if err := sendRange(w, logstore.Range{File: f, Pos: 8<<20 - 5, Len: 10}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("past the end over TCP: %v", err)
	}

	// A writer that is not a descriptor takes the copying path.
	var buf bytes.Buffer
	if err := sendRange(&buf, logstore.Range{File: f, Pos: 100, Len: 1000}); err != nil || !bytes.Equal(buf.Bytes(), data[100:1100]) {
		t.Fatalf("copy: %d bytes, %v", buf.Len(), err)
	}
	if err := sendRange(&buf, logstore.Range{File: f, Pos: 8<<20 - 5, Len: 10}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("copy past the end: %v", err)
	}
}

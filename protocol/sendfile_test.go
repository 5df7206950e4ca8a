package protocol

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// Concurrent ranges of one shared descriptor arrive intact, larger than
// the socket buffer (so sendfile hits EAGAIN and waits), and the file
// position is left alone.
func TestSendFileRanges(t *testing.T) {
	data := make([]byte, 8<<20)
	rand.NewChaCha8([32]byte{1}).Read(data)
	path := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	ranges := [][2]int64{{0, 3 << 20}, {123, 5 << 20}, {8<<20 - 10, 10}, {4 << 20, 1}}
	var wg sync.WaitGroup
	for _, r := range ranges {
		w, rd := tcpPair(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			if n, err := SendFile(w, f, r[0], r[1]); err != nil || n != r[1] {
				t.Errorf("SendFile %v: %d, %v", r, n, err)
			}
		}()
		got, err := io.ReadAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: got %d bytes, differing", r, len(got))
		}
	}
	wg.Wait()
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 0 {
		t.Fatalf("file position moved to %d", pos)
	}

	// Past the end of the file.
	w, _ := tcpPair(t)
	if _, err := SendFile(w, f, 8<<20-5, 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short file: %v", err)
	}
	// A writer that is not a socket takes the copying path.
	var buf bytes.Buffer
	if n, err := SendFile(&buf, f, 100, 1000); err != nil || n != 1000 || !bytes.Equal(buf.Bytes(), data[100:1100]) {
		t.Fatalf("fallback: %d, %v", n, err)
	}
	if _, err := SendFile(&buf, f, 8<<20-5, 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("fallback short file: %v", err)
	}
}

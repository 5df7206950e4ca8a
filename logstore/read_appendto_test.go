package logstore

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// AppendTo reads every range after dst's bytes, into dst's spare capacity
// when it has the room (no allocation, whatever that room held before),
// and a range the file no longer holds whole (a Truncate racing the read)
// is io.ErrUnexpectedEOF with dst cut back to where that range began.
func TestReadResultAppendTo(t *testing.T) {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := []byte("0123456789abcdefghij")
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	r := &ReadResult{Ranges: []Range{{File: f, Pos: 2, Len: 4}, {File: f, Pos: 10, Len: 6}}, Size: 10}

	buf := bytes.Repeat([]byte{'x'}, 64)[:3] // spare capacity full of garbage
	got, err := r.AppendTo(buf)
	if err != nil || string(got) != "xxx2345abcdef" {
		t.Fatalf("AppendTo = %q, %v", got, err)
	}
	if allocs := testing.AllocsPerRun(20, func() { _, _ = r.AppendTo(buf[:3]) }); allocs != 0 {
		t.Fatalf("AppendTo into a buffer with room allocated %v times", allocs)
	}
	if got, err := r.AppendTo(nil); err != nil || string(got) != "2345abcdef" {
		t.Fatalf("AppendTo(nil) = %q, %v", got, err)
	}

	short := &ReadResult{Ranges: []Range{{File: f, Pos: 0, Len: 2}, {File: f, Pos: 15, Len: 10}}, Size: 12}
	got, err = short.AppendTo([]byte("p"))
	if !errors.Is(err, io.ErrUnexpectedEOF) || string(got) != "p01" {
		t.Fatalf("short range: %q, %v; want \"p01\", io.ErrUnexpectedEOF", got, err)
	}
}

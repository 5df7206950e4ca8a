package share

import (
	"bytes"
	"errors"
	"path"
	"reflect"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

func sampleFrames() []*frame {
	return []*frame{
		{kind: kindConfig, group: "g", configs: map[string]string{"share.auto.offset.reset": "earliest"}},
		{kind: kindPart, group: "g", topicID: [16]byte{1}, part: 2, spso: 40, runs: []run{{3, stateAcked, 1}, {2, stateAvailable, 4}}},
		{kind: kindPartDel, group: "g", topicID: [16]byte{1}, part: 3},
		{kind: kindGroupDel, group: "h"},
	}
}

func encodeAll(fr []*frame) []byte {
	var buf, p []byte
	for _, f := range fr {
		p = f.encode(p[:0])
		buf = appendFrame(buf, p)
	}
	return buf
}

// Frames round-trip, and every cut of the file keeps exactly the whole
// frames before the cut.
func TestFramesRoundTripAndTornTail(t *testing.T) {
	fr := sampleFrames()
	data := encodeAll(fr)
	got, n := decodeFrames(data)
	if n != len(data) || len(got) != len(fr) {
		t.Fatalf("decoded %d frames, %d of %d bytes", len(got), n, len(data))
	}
	for i := range fr {
		want := *fr[i]
		if want.kind == kindPartDel || want.kind == kindGroupDel {
			want.runs, want.configs = nil, nil
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("frame %d: got %+v, want %+v", i, got[i], want)
		}
	}
	whole := 0
	for cut := 0; cut <= len(data); cut++ {
		fs, n := decodeFrames(data[:cut])
		if n > cut || len(fs) < whole {
			t.Fatalf("cut %d: %d frames, %d bytes", cut, len(fs), n)
		}
		whole = len(fs)
	}
	// A flipped bit stops replay at that frame.
	bad := bytes.Clone(data)
	bad[len(bad)-1] ^= 1
	if fs, _ := decodeFrames(bad); len(fs) != len(fr)-1 {
		t.Errorf("corrupt last frame: %d frames kept", len(fs))
	}
}

// A torn tail is truncated on open, and appends continue after it.
func TestStoreTruncatesTornTail(t *testing.T) {
	fsys := vfs.NewMem()
	st, fr, _, err := openStore(fsys, "/d", true)
	if err != nil || len(fr) != 0 {
		t.Fatalf("open: %v %d", err, len(fr))
	}
	if err := st.write(sampleFrames()...); err != nil {
		t.Fatal(err)
	}
	size := st.size
	st.close()
	f, _ := fsys.OpenFile(path.Join("/d", stateFile), 2, 0)
	f.WriteAt([]byte{0, 0, 0, 9, 1, 2}, size) // a torn frame
	f.Close()
	st, fr, dropped, err := openStore(fsys, "/d", true)
	if err != nil || len(fr) != 4 || dropped != 6 {
		t.Fatalf("reopen: err %v, %d frames, dropped %d", err, len(fr), dropped)
	}
	if err := st.write(&frame{kind: kindGroupDel, group: "x"}); err != nil {
		t.Fatal(err)
	}
	st.close()
	if _, fr, _, _ = openStore(fsys, "/d", true); len(fr) != 5 {
		t.Fatalf("after append: %d frames", len(fr))
	}
}

// A new state file whose header cannot be written is an error at open,
// not a file left without its header (which the next start would refuse
// as not a share state file); opening again once the disk is back works.
func TestStoreHeaderWriteFails(t *testing.T) {
	mem := vfs.NewMem()
	for _, op := range []vfs.Op{vfs.OpTruncate, vfs.OpWrite, vfs.OpSync} {
		fault := &vfs.FailNth{Op: op, N: 1}
		if _, _, _, err := openStore(vfs.NewFaultFS(mem, fault), "/d", true); !errors.Is(err, vfs.ErrInjected) || !fault.Fired() {
			t.Fatalf("%v failing while the header is written: open gave %v, want the injected error", op, err)
		}
	}
	st, fr, _, err := openStore(mem, "/d", true)
	if err != nil || len(fr) != 0 {
		t.Fatalf("open once the disk is back: %v, %d frames", err, len(fr))
	}
	if err := st.write(sampleFrames()...); err != nil {
		t.Fatal(err)
	}
	st.close()
	if _, fr, _, err = openStore(mem, "/d", true); err != nil || len(fr) != 4 {
		t.Fatalf("reopen: %v, %d frames", err, len(fr))
	}
}

// FuzzDecodeFrames: arbitrary bytes as the state file's body never panic;
// the valid prefix re-encodes to the same bytes.
func FuzzDecodeFrames(f *testing.F) {
	data := encodeAll(sampleFrames())
	f.Add(data)
	f.Add(data[:len(data)-3])
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, n := decodeFrames(data)
		if n < 0 || n > len(data) {
			t.Fatalf("valid prefix %d of %d", n, len(data))
		}
		var re []*frame
		for i := range fr {
			re = append(re, &fr[i])
		}
		again, m := decodeFrames(encodeAll(re))
		if m != len(encodeAll(re)) || len(again) != len(fr) {
			t.Fatalf("re-encoded frames do not decode: %d of %d", len(again), len(fr))
		}
		sp := &partition{}
		for _, x := range fr {
			if x.kind == kindPart {
				sp.restore(x.spso, x.runs)
			}
		}
	})
}

// A state change that arrives after close (a connection's share session
// ending while the broker shuts down) is refused, not a nil dereference.
func TestStoreWriteAfterClose(t *testing.T) {
	st, _, _, err := openStore(vfs.NewMem(), "/share", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.write(sampleFrames()[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.close(); err != nil {
		t.Fatal(err)
	}
	if err := st.write(sampleFrames()[1]); err != errStoreClosed {
		t.Fatalf("write after close: %v, want errStoreClosed", err)
	}
	if err := st.flush(); err != errStoreClosed {
		t.Fatalf("flush after close: %v, want errStoreClosed", err)
	}
}

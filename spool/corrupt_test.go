package spool

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// threeSegments writes records 0..29 as segments [0..9] [10..19] [20..29].
func threeSegments(t *testing.T, o Options) vfs.FS {
	t.Helper()
	if o.FS == nil {
		o.FS = vfs.NewMem()
	}
	o.BatchRecords, o.FlushInterval = 10, -1
	s, _ := openT(t, o)
	for i := range 30 {
		if _, err := s.Append(rec(int64(i), 50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return o.FS
}

func seqsOf(recs []Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

func span(a, b int64) []int64 {
	var out []int64
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

// TestTornSegmentAndDebris: a segment cut short (which the .tmp/rename
// protocol should make impossible, but disks lie) is set aside at Open and
// reported; .tmp debris is deleted; the rest is readable; sequence numbers
// continue past the lost range; the set-aside file is listed on later opens.
func TestTornSegmentAndDebris(t *testing.T) {
	fs := threeSegments(t, Options{})
	mid := filepath.Join("spool", segName(10, 19))
	b := readAll(t, fs, mid)
	writeAll(t, fs, mid, b[:len(b)/2])
	writeAll(t, fs, filepath.Join("spool", segName(30, 39)+".tmp"), []byte("half a segment"))

	s, rep := openT(t, Options{FS: fs})
	if len(rep.Corrupt) != 1 || rep.Corrupt[0].Name != segName(10, 19) || !errors.Is(rep.Corrupt[0].Err, ErrCorrupt) {
		t.Fatalf("corrupt %+v", rep.Corrupt)
	}
	if !slices.Equal(rep.RemovedTmp, []string{segName(30, 39) + ".tmp"}) || rep.NextSeq != 30 {
		t.Fatalf("report %+v", rep)
	}
	want := append(span(0, 9), span(20, 29)...)
	if got := seqsOf(readAllRecords(t, s, 0)); !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if st := s.Stats(); st.Corrupt != 1 || st.DiskSegments != 2 {
		t.Fatalf("stats %+v", st)
	}
	if got := files(t, fs, "spool"); !slices.Contains(got, segName(10, 19)+".corrupt") || slices.ContainsFunc(got, func(n string) bool { return strings.HasSuffix(n, ".tmp") }) {
		t.Fatalf("files %v", got)
	}
	s.Close()
	_, rep = openT(t, Options{FS: fs})
	if !slices.Equal(rep.SetAside, []string{segName(10, 19) + ".corrupt"}) || len(rep.Corrupt) != 0 {
		t.Fatalf("second open report %+v", rep)
	}
}

// TestCorruptPayloadFoundAtRead: Open checks headers only; a flipped bit in
// a payload is found by Read, which returns the records before it, then a
// *SegmentError naming the lost range once, then continues past it.
func TestCorruptPayloadFoundAtRead(t *testing.T) {
	for _, encrypt := range []bool{false, true} {
		o := Options{}
		if encrypt {
			o.Cipher = testCipher(t)
		}
		fs := threeSegments(t, o)
		o.FS = fs
		mid := filepath.Join("spool", segName(10, 19))
		b := readAll(t, fs, mid)
		b[len(b)-3] ^= 0x10
		writeAll(t, fs, mid, b)

		s, rep := openT(t, o)
		if len(rep.Corrupt) != 0 {
			t.Fatalf("header-only recovery flagged %+v", rep.Corrupt)
		}
		got, err := s.ReadFrom(0, 100)
		if err != nil || !slices.Equal(seqsOf(got), span(0, 9)) {
			t.Fatalf("first read: %v %v", seqsOf(got), err)
		}
		got, err = s.ReadFrom(10, 100)
		var se *SegmentError
		if !errors.As(err, &se) || !errors.Is(err, ErrCorrupt) || se.First != 10 || se.Last != 19 || len(got) != 0 {
			t.Fatalf("second read: %v %v", seqsOf(got), err)
		}
		got, err = s.ReadFrom(10, 100)
		if err != nil || !slices.Equal(seqsOf(got), span(20, 29)) {
			t.Fatalf("third read: %v %v", seqsOf(got), err)
		}
		if c := s.Corrupt(); len(c) != 1 || c[0].First != 10 {
			t.Fatalf("Corrupt() = %+v", c)
		}
		if !slices.Contains(files(t, fs, "spool"), segName(10, 19)+".corrupt") {
			t.Fatal("not renamed aside")
		}
	}
}

// TestBadHeaders: every kind of header damage is set aside at Open.
func TestBadHeaders(t *testing.T) {
	cases := map[string]func(fs vfs.FS){
		"flipped header byte": func(fs vfs.FS) {
			p := filepath.Join("spool", segName(10, 19))
			b := readAll(t, fs, p)
			b[20] ^= 1
			writeAll(t, fs, p, b)
		},
		"name does not match header": func(fs vfs.FS) {
			if err := fs.Rename(filepath.Join("spool", segName(10, 19)), filepath.Join("spool", segName(10, 18))); err != nil {
				t.Fatal(err)
			}
		},
		"future version": func(fs vfs.FS) {
			p := filepath.Join("spool", segName(10, 19))
			b := readAll(t, fs, p)
			h, _ := parseHeader(b)
			h.Version = 2
			putHeader(b, h)
			writeAll(t, fs, p, b)
		},
		"empty file": func(fs vfs.FS) { writeAll(t, fs, filepath.Join("spool", segName(10, 19)), nil) },
		"trailing garbage": func(fs vfs.FS) {
			p := filepath.Join("spool", segName(10, 19))
			writeAll(t, fs, p, append(readAll(t, fs, p), 0, 0, 0))
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			fs := threeSegments(t, Options{})
			damage(fs)
			s, rep := openT(t, Options{FS: fs})
			if len(rep.Corrupt) != 1 || rep.Corrupt[0].First != 10 {
				t.Fatalf("report %+v", rep)
			}
			if !errors.Is(rep.Corrupt[0].Err, ErrCorrupt) && !errors.Is(rep.Corrupt[0].Err, ErrUnsupported) {
				t.Fatalf("cause %v", rep.Corrupt[0].Err)
			}
			want := append(span(0, 9), span(20, 29)...)
			if got := seqsOf(readAllRecords(t, s, 0)); !slices.Equal(got, want) {
				t.Fatalf("read %v", got)
			}
		})
	}
}

// TestCiphertextHasNoPlaintext checks the files themselves; the unencrypted
// control shows the check can fail.
func TestCiphertextHasNoPlaintext(t *testing.T) {
	secret := []byte("card=4111-1111-1111-1111;ssn=078-05-1120")
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		for _, encrypt := range []bool{false, true} {
			fs := vfs.NewMem()
			o := Options{FS: fs, Compression: codec}
			if encrypt {
				o.Cipher = testCipher(t)
			}
			s, _ := openT(t, o)
			for range 3 {
				for range 50 {
					if _, err := s.Append(secret); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Flush(); err != nil { // same records, three segments
					t.Fatal(err)
				}
			}
			s.Close()
			var payloads [][]byte
			leaks := false
			for _, n := range filesWithSuffix(t, fs, "spool", ".seg") {
				b := readAll(t, fs, filepath.Join("spool", n))
				leaks = leaks || bytes.Contains(b, secret[:8]) || bytes.Contains(b, secret[20:28])
				payloads = append(payloads, b[headerLen:])
			}
			if encrypt && leaks {
				t.Fatalf("codec %d: plaintext found in an encrypted segment", codec)
			}
			if !encrypt && codec == CodecNone && !leaks {
				t.Fatal("control: plaintext not found in an unencrypted, uncompressed segment")
			}
			if encrypt && (bytes.Equal(payloads[0], payloads[1]) || bytes.Equal(payloads[1], payloads[2])) {
				t.Fatal("identical plaintexts gave identical ciphertexts: nonce reused")
			}
		}
	}
}

// TestWrongKey: a wrong key or a missing cipher fails Open with a clear
// error and leaves the segments alone; the right key then reads them.
func TestWrongKey(t *testing.T) {
	fs := threeSegments(t, Options{Cipher: testCipher(t)})
	other, err := NewAESGCM(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(Options{FS: fs, Dir: "spool", Cipher: other})
	var se *SegmentError
	if !errors.Is(err, ErrWrongKey) || !errors.As(err, &se) || !strings.Contains(err.Error(), "wrong key") {
		t.Fatalf("wrong key: %v", err)
	}
	_, _, err = Open(Options{FS: fs, Dir: "spool"})
	mustErrIs(t, err, ErrNoCipher)
	if got := filesWithSuffix(t, fs, "spool", ".seg"); len(got) != 3 {
		t.Fatalf("segments touched: %v", got)
	}
	s, _ := openT(t, Options{FS: fs, Cipher: testCipher(t)})
	if got := seqsOf(readAllRecords(t, s, 0)); !slices.Equal(got, span(0, 29)) {
		t.Fatalf("read %v", got)
	}
	if _, err := NewAESGCM(make([]byte, 16)); err == nil {
		t.Fatal("AES-128 key accepted")
	}
}

// TestHeaderAuthenticated: a valid header spliced onto another segment's
// valid payload (CRCs recomputed, so only the cipher can notice) fails to
// decrypt; without encryption the same splice goes through, which is what
// the associated data is for.
func TestHeaderAuthenticated(t *testing.T) {
	raw := appendFrame(nil, 1, []byte("same payload"))
	for _, encrypt := range []bool{false, true} {
		var c Cipher
		if encrypt {
			c = testCipher(t)
		}
		enc, err := newSegEncoder(CodecNone, c)
		if err != nil {
			t.Fatal(err)
		}
		a, err := enc.encode(nil, 5, 5, 1, raw)
		if err != nil {
			t.Fatal(err)
		}
		a = slices.Clone(a)
		b, err := enc.encode(nil, 9, 9, 1, raw)
		if err != nil {
			t.Fatal(err)
		}
		spliced := append(slices.Clone(b[:headerLen]), a[headerLen:]...)
		h, _ := parseHeader(spliced)
		h.PayloadCRC = crc32c(spliced[headerLen:])
		putHeader(spliced, h)
		dec, _ := newSegDecoder(c, 1<<20)
		_, _, err = dec.decode(spliced)
		if encrypt && !errors.Is(err, ErrWrongKey) {
			t.Fatalf("spliced encrypted segment: %v", err)
		}
		if !encrypt && err != nil {
			t.Fatalf("control: spliced plain segment: %v", err)
		}
	}
}

// TestReadIOErrorIsNotCorruption: a failed read is reported but the segment
// stays: the next read succeeds.
func TestReadIOErrorIsNotCorruption(t *testing.T) {
	mem := threeSegments(t, Options{})
	fault := &vfs.FailNth{Op: vfs.OpRead, N: 4} // Open reads the three headers; fail the first payload read
	s, _ := openT(t, Options{FS: vfs.NewFaultFS(mem, fault)})
	var err error
	for seq := int64(0); seq < 30 && err == nil; seq += 10 {
		_, err = s.ReadFrom(seq, 10)
	}
	if !fault.Fired() {
		t.Fatal("fault never fired")
	}
	if err == nil || errors.Is(err, ErrCorrupt) {
		t.Fatalf("read with an I/O error: %v, want a non-corruption error", err)
	}
	mustErrIs(t, err, vfs.ErrInjected)
	if got := seqsOf(readAllRecords(t, s, 0)); !slices.Equal(got, span(0, 29)) {
		t.Fatalf("after the I/O error: %v", got)
	}
	if len(s.Corrupt()) != 0 || len(filesWithSuffix(t, mem, "spool", ".corrupt")) != 0 {
		t.Fatal("segment set aside for an I/O error")
	}
}

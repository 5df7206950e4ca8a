package spool

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Key rotation: segments sealed under the old key stay readable through a
// ring whose current key is the new one; new segments are sealed under
// the new key only; a start that forgot the new key fails on the newest
// segment rather than on a read later.
func TestKeyRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	oldC, _ := NewAESGCM(oldKey)
	newC, _ := NewAESGCM(newKey)
	fs := threeSegments(t, Options{Cipher: oldC}) // seqs 0..29 under the old key
	ring, err := NewKeyRing(newC, oldC)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := openT(t, Options{FS: fs, Cipher: ring, BatchRecords: 10, FlushInterval: -1})
	for i := 30; i < 40; i++ {
		if _, err := s.Append(rec(int64(i), 50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = openT(t, Options{FS: fs, Cipher: ring})
	if got := seqsOf(readAllRecords(t, s, 0)); !slices.Equal(got, span(0, 39)) {
		t.Fatalf("read through the ring: %v", got)
	}
	s.Close()

	// The new key alone: the oldest segment (old key) fails Open.
	_, _, err = Open(Options{FS: fs, Dir: "spool", Cipher: newC})
	var se *SegmentError
	if !errors.Is(err, ErrWrongKey) || !errors.As(err, &se) || se.First != 0 {
		t.Fatalf("new key alone: %v", err)
	}
	// The old key alone (the new one forgotten): the newest segment fails.
	_, _, err = Open(Options{FS: fs, Dir: "spool", Cipher: oldC})
	if !errors.Is(err, ErrWrongKey) || !errors.As(err, &se) || se.First != 30 || !strings.Contains(err.Error(), "30-39") && !strings.Contains(se.Path, "30") {
		t.Fatalf("old key alone: %v", err)
	}
	if got := filesWithSuffix(t, fs, "spool", ".seg"); len(got) != 4 {
		t.Fatalf("segments touched by failed opens: %v", got)
	}
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xab, 0x01}, 16)
	for name, in := range map[string][]byte{
		"raw":            key,
		"hex":            []byte(hex.EncodeToString(key) + "\n"),
		"base64":         []byte(base64.StdEncoding.EncodeToString(key) + "\n"),
		"base64 raw url": []byte(" " + base64.RawURLEncoding.EncodeToString(key)),
	} {
		got, err := ParseKey(in)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("%s: %x %v", name, got, err)
		}
	}
	for name, in := range map[string][]byte{
		"short":        key[:16],
		"hex of 16":    []byte(hex.EncodeToString(key[:16])),
		"base64 of 31": []byte(base64.StdEncoding.EncodeToString(key[:31])),
		"empty":        nil,
	} {
		if _, err := ParseKey(in); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if KeyID(key) == KeyID(key[:31]) || len(KeyID(key)) != 16 || strings.Contains(KeyID(key), hex.EncodeToString(key[:4])) {
		t.Fatalf("key id %s", KeyID(key))
	}
}

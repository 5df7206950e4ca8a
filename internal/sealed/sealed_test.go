package sealed

import (
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	const magic = "MKTEST\n\x00"
	good := Seal(magic, 1, []byte(`{"a":1}`))
	if p, err := Open(magic, 1, 1<<20, good); err != nil || string(p) != `{"a":1}` {
		t.Fatalf("open: %q %v", p, err)
	}
	flip := append([]byte(nil), good...)
	flip[len(flip)-1] ^= 1
	long := append(append([]byte(nil), good...), 'x')
	for name, c := range map[string]struct {
		data []byte
		max  uint32
		want error
	}{
		"empty":     {nil, 1 << 20, ErrBadMagic},
		"magic":     {append([]byte("MKOTHER\n"), good[8:]...), 1 << 20, ErrBadMagic},
		"header":    {good[:10], 1 << 20, ErrTruncated},
		"version":   {append(append([]byte(magic), 2), good[9:]...), 1 << 20, ErrBadVersion},
		"payload":   {good[:len(good)-1], 1 << 20, ErrTruncated},
		"trailing":  {long, 1 << 20, ErrContent},
		"checksum":  {flip, 1 << 20, ErrChecksum},
		"oversized": {good, 3, ErrContent},
	} {
		if _, err := Open(magic, 1, c.max, c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

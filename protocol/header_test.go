package protocol

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRequestHeaderVersions(t *testing.T) {
	for _, tc := range []struct {
		key, version int16
		want         int
	}{
		{7, 0, 0},  // ControlledShutdown v0: no client id
		{7, 1, 1},  // later ControlledShutdown: v1
		{3, 8, 1},  // Metadata v8: classic
		{3, 9, 2},  // Metadata v9: flexible
		{0, 8, 1},  // Produce v8
		{0, 9, 2},  // Produce v9
		{18, 2, 1}, // ApiVersions v2
		{18, 3, 2}, // ApiVersions v3: flexible request header
		{18, 99, 2},
	} {
		if got := requestHeaderVersion(tc.key, tc.version, kmsg.RequestForKey(tc.key)); got != tc.want {
			t.Errorf("key %d v%d: header v%d, want v%d", tc.key, tc.version, got, tc.want)
		}
	}
}

func TestParseHeaderV0(t *testing.T) {
	req := kmsg.NewPtrControlledShutdownRequest()
	req.Version = 0
	req.BrokerID = 42
	b := binary.BigEndian.AppendUint16(nil, 7)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, 5)
	b = req.AppendTo(b) // no client id in header v0
	h, body, err := parseRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.clientID != nil || h.correlationID != 5 || body.(*kmsg.ControlledShutdownRequest).BrokerID != 42 {
		t.Fatalf("header %+v body %+v", h, body)
	}
}

func TestSkipTags(t *testing.T) {
	valid := []byte{2, 0, 3, 'a', 'b', 'c', 5, 0, 'r', 'e', 's', 't'}
	rest, ok := skipTags(valid)
	if !ok || string(rest) != "rest" {
		t.Fatalf("rest %q ok %v", rest, ok)
	}
	for _, bad := range [][]byte{
		{},                 // no count
		{1},                // count without a tag
		{1, 0},             // tag without a size
		{1, 0, 4, 'a'},     // size past the end
		{0xff, 0xff, 0xff}, // unterminated uvarint
		{200, 1},           // count larger than the input
	} {
		if _, ok := skipTags(bad); ok {
			t.Errorf("skipTags(% x) accepted", bad)
		}
	}
}

func TestParseRequestErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		frame []byte
		want  error
	}{
		"short":          {[]byte{0, 3, 0, 1, 0, 0, 0}, ErrTruncatedHeader},
		"unknown key":    {rawFrame(30000, 0, 1, []byte{0, 0})[4:], ErrUnknownAPIKey},
		"too new":        {rawFrame(3, 200, 1, []byte{0, 0})[4:], ErrUnknownVersion},
		"negative":       {rawFrame(3, -1, 1, []byte{0, 0})[4:], ErrUnknownVersion},
		"bad client id":  {rawFrame(3, 1, 1, []byte{0xff, 0xfe})[4:], ErrTruncatedHeader},
		"body truncated": {rawFrame(3, 1, 1, []byte{0xff, 0xff, 0, 0, 0, 5})[4:], ErrBadBody},
	} {
		if _, _, err := parseRequest(tc.frame); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

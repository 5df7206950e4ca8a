package durability

import (
	"testing"
	"time"
)

func TestParseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Policy
	}{
		{"always", Policy{Mode: Always}},
		{"never", Policy{Mode: Never}},
		{"interval=250ms", Policy{Mode: Interval, Interval: 250 * time.Millisecond}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Fatalf("%+v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	for _, bad := range []string{"", "Always", "interval=", "interval=-1s", "interval=0s", "sometimes"} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("Parse(%q) accepted", bad)
		}
	}
}

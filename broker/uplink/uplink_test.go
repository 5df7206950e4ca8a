package uplink

import "testing"

func TestParseForwardRule(t *testing.T) {
	for _, c := range []struct {
		in, prefix  string
		match, miss []string
	}{
		{"edge-*", "", []string{"edge-a", "edge-"}, []string{"edge", "xedge-a"}},
		{"edge-?=site.", "site.", []string{"edge-1"}, []string{"edge-12"}},
		{`/logs\.(a|b)/=up-`, "up-", []string{"logs.a", "logs.b"}, []string{"logs.c", "xlogs.a", "logs.ab"}},
	} {
		r, err := ParseForwardRule(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if r.Prefix != c.prefix {
			t.Errorf("%q: prefix %q, want %q", c.in, r.Prefix, c.prefix)
		}
		for _, m := range c.match {
			if !r.Match(m) {
				t.Errorf("%q should match %q", c.in, m)
			}
		}
		for _, m := range c.miss {
			if r.Match(m) {
				t.Errorf("%q should not match %q", c.in, m)
			}
		}
	}
	for _, bad := range []string{"", "=x", "[", "/(/", "a*=bad/prefix"} {
		if _, err := ParseForwardRule(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

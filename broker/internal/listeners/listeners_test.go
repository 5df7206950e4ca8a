package listeners

import (
	"strings"
	"testing"
)

func TestSetListenersErrors(t *testing.T) {
	var s Set
	s.SetAdvertised("h", 1)
	if err := s.Set([]Listener{{Name: "A"}, {Name: "A"}}, false); err == nil || !strings.Contains(err.Error(), `"A" given twice`) {
		t.Errorf("duplicate: %v", err)
	}
	if err := s.Set([]Listener{{Name: "A", SASL: true}}, false); err == nil || !strings.Contains(err.Error(), "no SASL users") {
		t.Errorf("SASL without users: %v", err)
	}
	if s.List() != nil {
		t.Errorf("a failed Set left %v", s.List())
	}
}

// NodeAddr takes the listener of the asked name on the asked node, else
// that node's first; Find and WantsSASL match name and node, any node in a
// single-node cluster; without named listeners only the first node has
// the advertised address and every connection must authenticate.
func TestNodeAddrFindWantsSASL(t *testing.T) {
	var s Set
	s.SetAdvertised("adv", 9)
	if h, p, ok := s.NodeAddr(1, "X", 1, false); !ok || h != "adv" || p != 9 {
		t.Errorf("unnamed, first node: %s:%d %v", h, p, ok)
	}
	if _, _, ok := s.NodeAddr(2, "X", 1, true); ok {
		t.Error("unnamed, other node: found an address")
	}
	if !s.WantsSASL("X", 1, true, false) {
		t.Error("unnamed listeners: SASL not wanted")
	}
	ls := []Listener{
		{Name: "IN", Host: "a", Port: 1, Node: 1},
		{Name: "OUT", Host: "b", Port: 2, Node: 1, SASL: true},
		{Name: "IN", Host: "c", Port: 3, Node: 2},
	}
	if err := s.Set(ls, true); err != nil {
		t.Fatal(err)
	}
	if h, p := s.Advertised(); h != "a" || p != 1 {
		t.Errorf("Advertised %s:%d, want the first listener's", h, p)
	}
	for _, c := range []struct {
		node  int32
		name  string
		multi bool
		host  string
		ok    bool
	}{
		{1, "OUT", true, "b", true}, {2, "IN", true, "c", true}, {2, "OUT", true, "c", true},
		{3, "IN", true, "", false}, {2, "OUT", false, "b", true},
	} {
		if h, _, ok := s.NodeAddr(c.node, c.name, 1, c.multi); h != c.host || ok != c.ok {
			t.Errorf("NodeAddr(%d, %q, multi %v) = %q %v, want %q %v", c.node, c.name, c.multi, h, ok, c.host, c.ok)
		}
	}
	if l, ok := s.Find("IN", 2, true); !ok || l.Host != "c" {
		t.Errorf("Find IN@2: %+v %v", l, ok)
	}
	if _, ok := s.Find("OUT", 2, true); ok {
		t.Error("Find OUT@2 in a cluster: found")
	}
	if l, ok := s.Find("OUT", 2, false); !ok || l.Host != "b" {
		t.Errorf("Find OUT, single node: %+v %v", l, ok)
	}
	for _, c := range []struct {
		name  string
		known bool
		want  bool
	}{{"IN", true, false}, {"OUT", true, true}, {"OTHER", true, true}, {"", false, true}} {
		if got := s.WantsSASL(c.name, 1, c.known, true); got != c.want {
			t.Errorf("WantsSASL(%q, known %v) = %v, want %v", c.name, c.known, got, c.want)
		}
	}
	got := s.List()
	got[0].Host = "changed"
	if s.List()[0].Host != "a" {
		t.Error("List returned the set's own slice")
	}
}

package faults

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A fault matches on key and topic (by name or, through TopicID, by ID),
// fires its Times and no more, and removing the last fault returns the
// Set to the nil fast path.
func TestSetPickTimesRemove(t *testing.T) {
	var s Set
	if s.Active() != nil {
		t.Fatal("empty set not on the fast path")
	}
	if _, err := s.Add(Fault{Keys: []int16{1}}); err == nil {
		t.Fatal("a fault without an action was accepted")
	}
	id, err := s.Add(Fault{Keys: []int16{1}, Topic: "t", ErrorCode: 6, Times: 2})
	if err != nil {
		t.Fatal(err)
	}
	tid := [16]byte{9}
	fetch := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = tid
	fetch.Topics = append(fetch.Topics, ft)
	byID := &Request{Key: 1, Version: 13, Body: fetch, TopicID: func(string) [16]byte { return tid }}
	other := &Request{Key: 1, Version: 13, Body: fetch, TopicID: func(string) [16]byte { return [16]byte{1} }}
	if s.Active().Pick(other) != nil {
		t.Fatal("fault fired for another topic")
	}
	if s.Active().Pick(&Request{Key: 0, Body: kmsg.NewPtrProduceRequest()}) != nil {
		t.Fatal("fault fired for another key")
	}
	for i := range 2 {
		if a := s.Active().Pick(byID); a == nil || a.ID() != id {
			t.Fatalf("match %d did not fire", i)
		}
	}
	if s.Active().Pick(byID) != nil {
		t.Fatal("fault fired past its Times")
	}
	if fi, ok := s.Get(id); !ok || fi.Fired != 2 || !fi.Done {
		t.Fatalf("info: %+v %v", fi, ok)
	}
	if fired, err := s.Remove(id); err != nil || fired != 2 {
		t.Fatalf("remove: %d %v", fired, err)
	}
	if s.Active() != nil {
		t.Fatal("not back on the fast path")
	}
	if _, err := s.Remove(id); !errors.Is(err, ErrNoFault) {
		t.Fatalf("second remove: %v", err)
	}
}

package acl

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkAuthorize1000: one uncached decision among 1000 bindings (a
// quarter of them prefixes, which every decision scans), what a
// connection pays once per resource and ACL change.
func BenchmarkAuthorize1000(b *testing.B) {
	var bs []Binding
	for i := range 998 {
		bd := Binding{kmsg.ACLResourceTypeTopic, fmt.Sprintf("other-%d", i), kmsg.ACLResourcePatternTypeLiteral, fmt.Sprintf("User:u%d", i%50), "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow}
		if i%4 == 1 {
			bd.Pattern, bd.Name = kmsg.ACLResourcePatternTypePrefixed, fmt.Sprintf("p%d-", i)
		}
		bs = append(bs, bd)
	}
	bs = append(bs, Binding{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:app", "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow})
	s := NewSet(bs, 1, Settings{})
	b.ReportAllocs()
	for b.Loop() {
		if !s.Authorize("User:app", "10.0.0.1", kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, "orders") {
			b.Fatal("denied")
		}
	}
}

// BenchmarkAuthzCached: what a request pays per resource once its
// connection has decided it (the cache hit every produce and fetch takes
// after the first).
func BenchmarkAuthzCached(b *testing.B) {
	var bs []Binding
	for i := range 998 {
		bs = append(bs, Binding{kmsg.ACLResourceTypeTopic, fmt.Sprintf("other-%d", i), kmsg.ACLResourcePatternTypeLiteral, fmt.Sprintf("User:u%d", i%50), "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow})
	}
	bs = append(bs, Binding{kmsg.ACLResourceTypeTopic, "bench", kmsg.ACLResourcePatternTypeLiteral, "User:ANONYMOUS", "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow})
	r := NewRequest(NewSet(bs, 1, Settings{}), "ANONYMOUS", "127.0.0.1")
	b.ReportAllocs()
	for b.Loop() {
		if !r.Allowed(kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, "bench") {
			b.Fatal("denied")
		}
	}
}

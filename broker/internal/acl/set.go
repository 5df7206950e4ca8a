package acl

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Set is an immutable snapshot of the bindings with the authorizer's
// settings. The zero Set is not usable; build one with NewSet.
type Set struct {
	version  uint64
	bindings []Binding
	byType   map[ResourceType]*typeIndex

	super           map[string]bool
	allowIfNoACL    bool
	superUsersNames []string
}

// typeIndex holds one resource type's bindings by pattern.
type typeIndex struct {
	literal  map[string][]Binding // by name; "*" included
	prefixed map[string][]Binding // by prefix
	// prefixLens are the lengths of the prefixes, ascending: a decision
	// looks up the name's prefix of each length, not every prefix.
	prefixLens []int
}

// Settings are the authorizer's configuration: Kafka's super.users and
// allow.everyone.if.no.acl.found.
type Settings struct {
	SuperUsers                []string
	AllowEveryoneIfNoACLFound bool
}

// NewSet indexes bindings (already validated) under version.
func NewSet(bindings []Binding, version uint64, st Settings) *Set {
	s := &Set{version: version, bindings: slices.Clone(bindings), byType: map[ResourceType]*typeIndex{},
		super: map[string]bool{}, allowIfNoACL: st.AllowEveryoneIfNoACLFound, superUsersNames: slices.Clone(st.SuperUsers)}
	for _, u := range st.SuperUsers {
		s.super[u] = true
	}
	for _, b := range s.bindings {
		ti := s.byType[b.ResourceType]
		if ti == nil {
			ti = &typeIndex{literal: map[string][]Binding{}, prefixed: map[string][]Binding{}}
			s.byType[b.ResourceType] = ti
		}
		if b.Pattern == kmsg.ACLResourcePatternTypePrefixed {
			if len(ti.prefixed[b.Name]) == 0 && !slices.Contains(ti.prefixLens, len(b.Name)) {
				ti.prefixLens = append(ti.prefixLens, len(b.Name))
			}
			ti.prefixed[b.Name] = append(ti.prefixed[b.Name], b)
		} else {
			ti.literal[b.Name] = append(ti.literal[b.Name], b)
		}
	}
	for _, ti := range s.byType {
		slices.Sort(ti.prefixLens)
	}
	return s
}

// Version increases with every change of the bindings.
func (s *Set) Version() uint64 { return s.version }

// Bindings returns a copy of every binding, in creation order.
func (s *Set) Bindings() []Binding { return slices.Clone(s.bindings) }

// Len is the number of bindings.
func (s *Set) Len() int { return len(s.bindings) }

// Settings returns the settings s was built with.
func (s *Set) Settings() Settings {
	return Settings{SuperUsers: slices.Clone(s.superUsersNames), AllowEveryoneIfNoACLFound: s.allowIfNoACL}
}

// IsSuperUser reports whether principal is in super.users.
func (s *Set) IsSuperUser(principal string) bool { return s.super[principal] }

// result of one binding for one request.
type result int8

const (
	noMatch result = iota
	allowed
	denied
)

// implies reports whether an ALLOW for granted allows op.
func implies(granted, op Operation) bool {
	if granted == op || granted == kmsg.ACLOperationAll {
		return true
	}
	switch op {
	case kmsg.ACLOperationDescribe:
		return granted == kmsg.ACLOperationRead || granted == kmsg.ACLOperationWrite ||
			granted == kmsg.ACLOperationDelete || granted == kmsg.ACLOperationAlter
	case kmsg.ACLOperationDescribeConfigs:
		return granted == kmsg.ACLOperationAlterConfigs
	}
	return false
}

// decide is one binding's verdict for (principal, host, op), the resource
// already matched (StandardAuthorizerData.findResult).
func decide(b *Binding, principal, host string, op Operation) result {
	if b.Principal != principal && b.Principal != WildcardPrincipal {
		return noMatch
	}
	if b.Host != Wildcard && b.Host != host {
		return noMatch
	}
	if b.Permission == kmsg.ACLPermissionTypeDeny {
		if b.Operation == op || b.Operation == kmsg.ACLOperationAll {
			return denied
		}
		return noMatch
	}
	if implies(b.Operation, op) {
		return allowed
	}
	return noMatch
}

// Authorize decides whether principal from host may do op on the resource
// (package doc, "Deciding").
func (s *Set) Authorize(principal, host string, op Operation, rt ResourceType, name string) bool {
	if s.super[principal] {
		return true
	}
	ti := s.byType[rt]
	if ti == nil {
		return s.allowIfNoACL
	}
	matched, allow := false, false
	check := func(bs []Binding) bool {
		for i := range bs {
			matched = true
			switch decide(&bs[i], principal, host, op) {
			case denied:
				return false
			case allowed:
				allow = true
			}
		}
		return true
	}
	if !check(ti.literal[name]) {
		return false
	}
	if name != Wildcard && !check(ti.literal[Wildcard]) {
		return false
	}
	for _, n := range ti.prefixLens {
		if n > len(name) {
			break
		}
		if !check(ti.prefixed[name[:n]]) {
			return false
		}
	}
	if allow {
		return true
	}
	return !matched && s.allowIfNoACL
}

// AuthorizeByResourceType reports whether principal may do op on at least
// one resource of type rt, as Kafka's Authorizer.authorizeByResourceType:
// a made-up name is tried first (super users, "*" allows, and
// allow.everyone.if.no.acl.found), then any ALLOW that no DENY covers
// whole.
func (s *Set) AuthorizeByResourceType(principal, host string, op Operation, rt ResourceType) bool {
	if s.Authorize(principal, host, op, rt, "hardcode") {
		return true
	}
	ti := s.byType[rt]
	if ti == nil {
		return false
	}
	applies := func(b *Binding) bool {
		return (b.Principal == principal || b.Principal == WildcardPrincipal) &&
			(b.Host == Wildcard || b.Host == host) &&
			(b.Operation == op || b.Operation == kmsg.ACLOperationAll)
	}
	var denyLiteral, denyPrefix []string
	var allowLiteral, allowPrefix []string
	each := func(b *Binding) {
		if !applies(b) {
			return
		}
		deny := b.Permission == kmsg.ACLPermissionTypeDeny
		prefixed := b.Pattern == kmsg.ACLResourcePatternTypePrefixed
		switch {
		case deny && prefixed:
			denyPrefix = append(denyPrefix, b.Name)
		case deny:
			denyLiteral = append(denyLiteral, b.Name)
		case prefixed:
			allowPrefix = append(allowPrefix, b.Name)
		default:
			allowLiteral = append(allowLiteral, b.Name)
		}
	}
	for _, bs := range ti.literal {
		for i := range bs {
			each(&bs[i])
		}
	}
	for _, bs := range ti.prefixed {
		for i := range bs {
			each(&bs[i])
		}
	}
	if slices.Contains(denyLiteral, Wildcard) {
		return false
	}
	coveredByDenyPrefix := func(name string) bool {
		for _, d := range denyPrefix {
			if strings.HasPrefix(name, d) {
				return true
			}
		}
		return false
	}
	for _, a := range allowPrefix {
		if !coveredByDenyPrefix(a) {
			return true
		}
	}
	for _, a := range allowLiteral {
		if a == Wildcard || !slices.Contains(denyLiteral, a) && !coveredByDenyPrefix(a) {
			return true
		}
	}
	return false
}

// AuthorizedOperations is KIP-430's bit field: bit op is set for every
// operation of rt's ACLs that principal may do on the resource.
func (s *Set) AuthorizedOperations(principal, host string, rt ResourceType, name string) int32 {
	var bits int32
	for _, op := range supported[rt] {
		if s.Authorize(principal, host, op, rt, name) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}

// Filter returns the bindings f selects, in creation order.
func (s *Set) Filter(f Filter) []Binding {
	var out []Binding
	for _, b := range s.bindings {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}

// Create returns a Set with bs added (each validated by the caller); a
// binding already present is not added twice, as Kafka keeps one copy.
func (s *Set) Create(bs []Binding) *Set {
	next := slices.Clone(s.bindings)
	for _, b := range bs {
		if !slices.Contains(next, b) {
			next = append(next, b)
		}
	}
	return NewSet(next, s.version+1, s.Settings())
}

// Delete returns a Set without the bindings any of filters selects, and
// per filter the bindings it removed.
func (s *Set) Delete(filters []Filter) (*Set, [][]Binding) {
	removed := make([][]Binding, len(filters))
	var keep []Binding
	for _, b := range s.bindings {
		gone := false
		for i, f := range filters {
			if f.Matches(b) {
				removed[i] = append(removed[i], b)
				gone = true
			}
		}
		if !gone {
			keep = append(keep, b)
		}
	}
	return NewSet(keep, s.version+1, s.Settings()), removed
}

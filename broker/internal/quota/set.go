package quota

import (
	"fmt"
	"math"
	"net"
	"slices"
	"sort"
	"strings"
)

// Entity types.
const (
	TypeUser   = "user"
	TypeClient = "client-id"
	TypeIP     = "ip"
)

// Quota keys, as Kafka names them.
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
	ConnectionCreationRate = "connection_creation_rate"
)

// keyKind is how Kafka's QuotaConfigs types a key: integral keys refuse
// fractions.
type keyKind uint8

const (
	kindDouble keyKind = iota
	kindLong
	kindInt
)

var clientKeys = map[string]keyKind{
	ProducerByteRate:       kindLong,
	ConsumerByteRate:       kindLong,
	RequestPercentage:      kindDouble,
	ControllerMutationRate: kindDouble,
}

var ipKeys = map[string]keyKind{ConnectionCreationRate: kindInt}

// Part is one entity component; a nil Name is the type's default.
type Part struct {
	Type string
	Name *string
}

// Entity is a quota entity, its parts sorted by type.
type Entity []Part

// Key is a map key for e.
func (e Entity) Key() string {
	var sb strings.Builder
	for _, p := range e {
		sb.WriteString(p.Type)
		if p.Name == nil {
			sb.WriteByte(0)
		} else {
			sb.WriteByte('=')
			sb.WriteString(*p.Name)
		}
		sb.WriteByte(1)
	}
	return sb.String()
}

// String is the entity as kafka-configs shows it: user=alice,client-id=<default>.
func (e Entity) String() string {
	parts := make([]string, len(e))
	for i, p := range e {
		n := "<default>"
		if p.Name != nil {
			n = *p.Name
		}
		parts[i] = p.Type + "=" + n
	}
	return strings.Join(parts, ",")
}

// Get returns e's part of type t.
func (e Entity) Get(t string) (Part, bool) {
	for _, p := range e {
		if p.Type == t {
			return p, true
		}
	}
	return Part{}, false
}

// InvalidError is a validation failure; Kafka answers it INVALID_REQUEST
// with Msg as the message.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// NewEntity validates parts as Kafka's ClientQuotaControlManager does and
// returns them sorted.
func NewEntity(parts []Part) (Entity, error) {
	if len(parts) == 0 {
		return nil, invalid("Invalid empty client quota entity")
	}
	e := make(Entity, 0, len(parts))
	var user, client, ip bool
	for _, p := range parts {
		if _, dup := e.Get(p.Type); dup {
			return nil, invalid("Invalid empty client quota entity, duplicate entity entry %s", p.Type)
		}
		switch p.Type {
		case TypeUser:
			user = true
		case TypeClient:
			client = true
		case TypeIP:
			ip = true
		default:
			return nil, invalid("Unhandled client quota entity type: %s", p.Type)
		}
		if p.Name != nil && *p.Name == "" {
			return nil, invalid("Empty %s not supported", p.Type)
		}
		e = append(e, p)
	}
	if ip {
		if user || client {
			return nil, invalid("Invalid quota entity combination, IP entity should not be combined with User or ClientId")
		}
		if p, _ := e.Get(TypeIP); p.Name != nil && net.ParseIP(*p.Name) == nil {
			return nil, invalid("%s is not a valid IP or resolvable host.", *p.Name)
		}
	}
	sort.Slice(e, func(i, j int) bool { return e[i].Type < e[j].Type })
	return e, nil
}

// ValidateValue checks one key and value for entity e as Kafka's
// validateQuotaKeyValue does.
func ValidateValue(e Entity, key string, value float64) error {
	keys := clientKeys
	if _, ok := e.Get(TypeIP); ok {
		keys = ipKeys
	}
	kind, ok := keys[key]
	if !ok {
		return invalid("Invalid configuration key %s", key)
	}
	if math.IsNaN(value) || value <= 0 {
		return invalid("Quota %s must be greater than 0", key)
	}
	switch kind {
	case kindLong:
		if value > math.MaxInt64 {
			return invalid("Proposed value for %s is too large for a LONG.", key)
		}
	case kindInt:
		if value > math.MaxInt32 {
			return invalid("Proposed value for %s is too large for an INT.", key)
		}
	}
	if kind != kindDouble && math.Abs(value-math.Round(value)) > 1e-6 {
		return invalid("Integer value expected for %s but got %v", key, value)
	}
	return nil
}

// Entry is one entity's quotas.
type Entry struct {
	Entity Entity
	Values map[string]float64
}

// Set is an immutable table of quotas.
type Set struct {
	byKey map[string]*Entry
	// Version grows with every change, so caches can tell they are stale.
	Version uint64
}

// NewSet returns a set holding entries (validated by the caller).
func NewSet(entries []Entry, version uint64) *Set {
	s := &Set{byKey: make(map[string]*Entry, len(entries)), Version: version}
	for i := range entries {
		e := entries[i]
		if len(e.Values) == 0 {
			continue
		}
		s.byKey[e.Entity.Key()] = &e
	}
	return s
}

// Empty reports whether s holds no quota.
func (s *Set) Empty() bool { return s == nil || len(s.byKey) == 0 }

// Entries returns s's entries sorted by entity.
func (s *Set) Entries() []Entry {
	if s == nil {
		return nil
	}
	out := make([]Entry, 0, len(s.byKey))
	for _, e := range s.byKey {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Entity.String() < out[j].Entity.String() })
	return out
}

// Op is one change of an alter: set Key to Value, or Remove it.
type Op struct {
	Key    string
	Value  float64
	Remove bool
}

// With returns a copy of s with ops applied to e (validated by the caller).
func (s *Set) With(changes map[string]Change) *Set {
	var entries []Entry
	if s != nil {
		for k, e := range s.byKey {
			if _, ch := changes[k]; !ch {
				entries = append(entries, *e)
			}
		}
	}
	for k, c := range changes {
		vals := map[string]float64{}
		if s != nil {
			if old := s.byKey[k]; old != nil {
				for kk, v := range old.Values {
					vals[kk] = v
				}
			}
		}
		for _, op := range c.Ops {
			if op.Remove {
				delete(vals, op.Key)
			} else {
				vals[op.Key] = op.Value
			}
		}
		entries = append(entries, Entry{Entity: c.Entity, Values: vals})
	}
	var v uint64
	if s != nil {
		v = s.Version
	}
	return NewSet(entries, v+1)
}

// Change is the ops of an alter for one entity.
type Change struct {
	Entity Entity
	Ops    []Op
}

// Filter component match types (DescribeClientQuotas).
const (
	MatchExact     = 0
	MatchDefault   = 1
	MatchSpecified = 2
)

// FilterPart is one DescribeClientQuotas filter component.
type FilterPart struct {
	Type  string
	Match int8
	Name  *string // MatchExact only
}

// Describe returns the entries that match the filter, as Kafka's
// ClientQuotasImage.describe does: each component's type must be present
// (exact: with that name; default: the default; specified: with any name,
// default included), and with strict the entity has no other type.
func (s *Set) Describe(filter []FilterPart, strict bool) ([]Entry, error) {
	seen := map[string]bool{}
	var user, client, ip bool
	for _, f := range filter {
		if seen[f.Type] {
			return nil, invalid("Entity type %s cannot appear more than once in the filter.", f.Type)
		}
		seen[f.Type] = true
		switch f.Type {
		case TypeUser:
			user = true
		case TypeClient:
			client = true
		case TypeIP:
			ip = true
		default:
			return nil, invalid("Unknown entity type: %s", f.Type)
		}
		switch f.Match {
		case MatchExact:
			if f.Name == nil {
				return nil, invalid("Match type EXACT requires a name for entity type %s", f.Type)
			}
		case MatchDefault, MatchSpecified:
		default:
			return nil, invalid("Unknown match type %d", f.Match)
		}
	}
	if ip && (user || client) {
		return nil, invalid("Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.")
	}
	var out []Entry
	for _, e := range s.Entries() {
		if matches(e.Entity, filter, strict) {
			out = append(out, e)
		}
	}
	return out, nil
}

func matches(e Entity, filter []FilterPart, strict bool) bool {
	for _, f := range filter {
		p, ok := e.Get(f.Type)
		if !ok {
			return false
		}
		switch f.Match {
		case MatchExact:
			if p.Name == nil || *p.Name != *f.Name {
				return false
			}
		case MatchDefault:
			if p.Name != nil {
				return false
			}
		}
	}
	if strict && len(e) != len(filter) {
		return false
	}
	return true
}

// Resolved is the quota a (user, client ID) is held to for one key.
type Resolved struct {
	Limit float64 // 0: none
	// User and Client are the sensor's tags: who shares the quota.
	User, Client string
	// Entity is the entity the quota comes from.
	Entity string
}

// Resolve picks the quota for key in Kafka's order (see the package doc).
func (s *Set) Resolve(key, user, client string) Resolved {
	if s.Empty() {
		return Resolved{}
	}
	u, c := &user, &client
	levels := [...]struct {
		user, client *string
		hasUser      bool
		hasClient    bool
		tagU, tagC   string
	}{
		{u, c, true, true, user, client},
		{u, nil, true, true, user, client},
		{u, nil, true, false, user, ""},
		{nil, c, true, true, user, client},
		{nil, nil, true, true, user, client},
		{nil, nil, true, false, user, ""},
		{nil, c, false, true, "", client},
		{nil, nil, false, true, "", client},
	}
	for _, l := range levels {
		var e Entity
		if l.hasClient {
			e = append(e, Part{TypeClient, l.client})
		}
		if l.hasUser {
			e = append(e, Part{TypeUser, l.user})
		}
		if ent := s.byKey[e.Key()]; ent != nil {
			if v, ok := ent.Values[key]; ok {
				return Resolved{Limit: v, User: l.tagU, Client: l.tagC, Entity: e.String()}
			}
		}
	}
	return Resolved{}
}

// ResolveIP picks the connection_creation_rate quota of a client IP: its
// own entity, else the ip default (Kafka's ConnectionQuotas order). The
// rate is always measured per IP.
func (s *Set) ResolveIP(ip string) float64 {
	if s.Empty() {
		return 0
	}
	for _, e := range []Entity{{{TypeIP, &ip}}, {{TypeIP, nil}}} {
		if ent := s.byKey[e.Key()]; ent != nil {
			if v, ok := ent.Values[ConnectionCreationRate]; ok {
				return v
			}
		}
	}
	return 0
}

// Keys lists the keys valid for user and client-id entities.
func Keys() []string {
	ks := make([]string, 0, len(clientKeys))
	for k := range clientKeys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

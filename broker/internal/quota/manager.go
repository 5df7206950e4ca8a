package quota

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// FileName is the quota file's name in the data directory.
const FileName = "client_quotas"

// Kind is a quota a connection's requests are measured against.
type Kind uint8

// The per-(user, client ID) quotas; connection_creation_rate is per IP
// (Manager.ConnRate).
const (
	Produce Kind = iota
	Fetch
	Request
	Mutation
	NumKinds
)

// Key is the quota key of k (producer_byte_rate, ...).
func (k Kind) Key() string { return kindKey[k] }

var kindKey = [NumKinds]string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate}

type sensorKey struct {
	kind         Kind
	user, client string
}

// Sensor measures one entity group's use of one quota: a Rate for byte,
// request and connection quotas, a Bucket for controller mutations.
type Sensor struct {
	Rate   *Rate
	Bucket *Bucket
	// last is the unix-nano time of the last recording, for expiry.
	last atomic.Int64
}

// Touch records that the sensor was used at now; a sensor idle for an
// hour may be dropped.
func (s *Sensor) Touch(now time.Time) { s.last.Store(now.UnixNano()) }

// Manager is a broker's quotas: the Set in force, kept in the quota file,
// and the sensors that measure use against it. Its mutexes: alterMu
// serializes alters and their file writes; sensorMu guards the sensor
// tables and is a leaf.
type Manager struct {
	fs     vfs.FS
	file   string
	window Window

	set atomic.Pointer[Set]
	on  atomic.Bool // the set holds any quota

	alterMu sync.Mutex // one alter (and file write) at a time

	sensorMu sync.Mutex
	sensors  map[sensorKey]*Sensor
	// connRates are the per-IP connection creation rates, under sensorMu.
	connRates map[string]*Sensor
}

// Open loads dir's quota file (none: no quotas); a damaged file is an
// error, which stops the broker's start.
func Open(fsys vfs.FS, dir string, w Window) (*Manager, error) {
	m := &Manager{fs: fsys, file: path.Join(dir, FileName), window: w.Normalize(), sensors: map[sensorKey]*Sensor{}, connRates: map[string]*Sensor{}}
	data, err := vfs.ReadFile(fsys, m.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m.set.Store(NewSet(nil, 1))
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("broker: reading client quotas %s: %w", m.file, err)
	}
	s, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("broker: client quota file %s is damaged: %w", m.file, err)
	}
	m.set.Store(s)
	m.on.Store(!s.Empty())
	return m, nil
}

// On reports whether any quota is set: one atomic load, all that
// requests pay when none is.
func (m *Manager) On() bool { return m.on.Load() }

// Set is the quotas in force.
func (m *Manager) Set() *Set { return m.set.Load() }

// Window is the sampling window the rates use.
func (m *Manager) Window() Window { return m.window }

// Alter applies changes (validated) and makes them durable before
// returning.
func (m *Manager) Alter(changes map[string]Change) error {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	next := m.set.Load().With(changes)
	if err := vfs.WriteFileAtomic(m.fs, m.file, Encode(next), 0o644); err != nil {
		return fmt.Errorf("broker: writing client quotas: %w", err)
	}
	m.set.Store(next)
	m.on.Store(!next.Empty())
	return nil
}

// Sensor is the sensor of kind for the tags user and client (as Resolve
// gives them), made at its first use.
func (m *Manager) Sensor(kind Kind, user, client string, now time.Time) *Sensor {
	k := sensorKey{kind, user, client}
	m.sensorMu.Lock()
	defer m.sensorMu.Unlock()
	s := m.sensors[k]
	if s == nil {
		s = &Sensor{}
		if kind == Mutation {
			s.Bucket = NewBucket(m.window)
		} else {
			s.Rate = NewRate(m.window, now)
		}
		m.sensors[k] = s
		sweep(m.sensors, s, now)
	}
	return s
}

// ConnRate is the connection creation rate sensor of ip.
func (m *Manager) ConnRate(ip string, now time.Time) *Sensor {
	m.sensorMu.Lock()
	defer m.sensorMu.Unlock()
	s := m.connRates[ip]
	if s == nil {
		s = &Sensor{Rate: NewRate(m.window, now)}
		m.connRates[ip] = s
		sweep(m.connRates, s, now)
	}
	return s
}

// sweep drops sensors idle for an hour, as Kafka expires them, each time
// the table grows by 1024 so one-off client IDs and IPs do not pile up;
// added was just made and stays.
func sweep[K comparable](table map[K]*Sensor, added *Sensor, now time.Time) {
	if len(table)%1024 != 0 {
		return
	}
	cut := now.Add(-time.Hour).UnixNano()
	for k, s := range table {
		if s != added && s.last.Load() < cut {
			delete(table, k)
		}
	}
}

// Stat is one quota sensor's use, for /metrics: Kind is the quota key
// (producer_byte_rate, ...), User and Client the sensor's tags (who shares
// the quota, "" for a tag the quota does not split by).
type Stat struct {
	Kind, User, Client string
	IP                 string // connection_creation_rate sensors only
	// Rate is the current windowed rate (bytes/s, percent of a thread,
	// or for controller mutations the tokens left); Limit the quota.
	Rate, Limit float64
	// Total is what was recorded; Throttle the throttle time given.
	Total    float64
	Throttle time.Duration
}

// Stats returns every live sensor's use, sorted by kind and tags.
func (m *Manager) Stats(now time.Time) []Stat {
	set := m.set.Load()
	m.sensorMu.Lock()
	keys := make([]sensorKey, 0, len(m.sensors))
	sens := make([]*Sensor, 0, len(m.sensors))
	for k, s := range m.sensors {
		keys = append(keys, k)
		sens = append(sens, s)
	}
	var out []Stat
	for ip, s := range m.connRates {
		st := Stat{Kind: ConnectionCreationRate, IP: ip, Limit: set.ResolveIP(ip), Rate: s.Rate.Measure(now)}
		st.Total, st.Throttle = s.Rate.Stats()
		out = append(out, st)
	}
	m.sensorMu.Unlock()
	for i, k := range keys {
		st := Stat{Kind: k.kind.Key(), User: k.user, Client: k.client}
		// The limit now in force for the sensor's tags.
		st.Limit = set.Resolve(st.Kind, k.user, k.client).Limit
		if s := sens[i]; s.Rate != nil {
			st.Rate = s.Rate.Measure(now)
			st.Total, st.Throttle = s.Rate.Stats()
		} else {
			st.Rate = s.Bucket.Tokens(st.Limit, now)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b Stat) int {
		return strings.Compare(a.Kind+"\x00"+a.User+"\x00"+a.Client+"\x00"+a.IP, b.Kind+"\x00"+b.User+"\x00"+b.Client+"\x00"+b.IP)
	})
	return out
}

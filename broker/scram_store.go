package broker

// SCRAM credentials changed through AlterUserScramCredentials (KIP-554).
//
// The effective credential of a (user, mechanism) is the API's change if
// there is one, else the one derived at start from SASLConfig.Users. An
// API change therefore wins over the start-up set until the API changes it
// again: an upsert replaces a start-up password; deleting a start-up user's
// credential leaves a tombstone so it stays deleted across restarts;
// deleting a credential that only the API created drops the entry (a
// start-up user of that name added later would then show through).
//
// Changes are kept in DataDir/scram_credentials.json, rewritten whole and
// atomically (tmp, fsync, rename, fsync dir) on each Alter before it is
// answered; with an in-memory FS they live in memory. The file holds what
// Kafka's metadata log holds (salt, iterations, StoredKey, ServerKey),
// never a password or salted password.
//
// The store is opened with the broker's other storage (openStorage); a
// file that cannot be read or decoded stops the broker from starting, as
// other damaged metadata does (failing open could resurrect a credential
// that a tombstone revokes).
//
// As in Kafka, credentials are stored whether or not SASL or SCRAM is
// enabled on the broker; they are only used by SCRAM logins.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"sync"

	"github.com/minikafka/minikafka/internal/vfs"
)

// scramFile is the store's file name in DataDir.
const scramFile = "scram_credentials.json"

// Kafka's iteration bounds for SCRAM-SHA-256 and -512
// (ScramMechanism.minIterations/maxIterations).
const (
	scramMinIterations = DefaultSCRAMIterations
	scramMaxIterations = 16384
)

// scramMechTypes are the wire's mechanism numbers (1, 2), in order.
var scramMechTypes = []string{1: SASLScramSHA256, 2: SASLScramSHA512}

// scramMechName is the name of wire mechanism t, or "" if unknown.
func scramMechName(t int8) string {
	if t <= 0 || int(t) >= len(scramMechTypes) {
		return ""
	}
	return scramMechTypes[t]
}

type scramKey struct{ user, mech string }

type scramStore struct {
	file    string                           // DataDir/scram_credentials.json
	startup map[string]map[string]*scramCred // mechanism → user; read-only

	mu      sync.RWMutex
	changes map[scramKey]*scramCred // nil value: deleted (tombstone)
}

// openScramStore loads the credentials changed through the API over the
// start-up users of b's SASL configuration.
func openScramStore(b *Broker) (*scramStore, error) {
	s := &scramStore{file: path.Join(b.cfg.DataDir, scramFile)}
	if b.sasl != nil {
		s.startup = b.sasl.scram
	}
	data, err := readFile(b.fs, s.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.changes, err = map[scramKey]*scramCred{}, nil
	case err == nil:
		s.changes, err = decodeScramChanges(data)
	}
	if err != nil {
		return nil, fmt.Errorf("broker: loading SCRAM credentials from %s: %w", s.file, err)
	}
	return s, nil
}

// scramLookup is the credential lookup for SCRAM logins with mech.
func (b *Broker) scramLookup(mech string) func(user string) *scramCred {
	return func(user string) *scramCred { return b.scram.get(user, mech) }
}

func (s *scramStore) get(user, mech string) *scramCred {
	s.mu.RLock()
	c, changed := s.changes[scramKey{user, mech}]
	s.mu.RUnlock()
	if changed {
		return c
	}
	return s.startup[mech][user]
}

// users returns every user with at least one credential, sorted.
func (s *scramStore) users() []string {
	seen := map[string]bool{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, m := range scramMechTypes[1:] {
		for u := range s.startup[m] {
			if c, changed := s.changes[scramKey{u, m}]; !changed || c != nil {
				seen[u] = true
			}
		}
	}
	for k, c := range s.changes {
		if c != nil {
			seen[k.user] = true
		}
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// apply replaces credentials (nil: delete) and persists the new set
// before it takes effect. Deletions must name existing credentials.
func (s *scramStore) apply(b *Broker, set map[scramKey]*scramCred) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[scramKey]*scramCred, len(s.changes)+len(set))
	for k, c := range s.changes {
		next[k] = c
	}
	for k, c := range set {
		if c == nil && s.startup[k.mech][k.user] == nil {
			delete(next, k) // only the API ever had it: no tombstone needed
			continue
		}
		next[k] = c
	}
	data, err := encodeScramChanges(next)
	if err != nil {
		return err
	}
	// StoredKey and ServerKey allow an offline guess at the password:
	// owner-only.
	if err := vfs.WriteFileAtomic(b.fs, s.file, data, 0o600); err != nil {
		return err
	}
	s.changes = next
	return nil
}

// scramFileV1 is the file's JSON form.
type scramFileV1 struct {
	Version     int                `json:"version"`
	Credentials []scramFileEntryV1 `json:"credentials"`
}

type scramFileEntryV1 struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Deleted    bool   `json:"deleted,omitempty"`
	Salt       []byte `json:"salt,omitempty"` // base64 in JSON
	Iterations int    `json:"iterations,omitempty"`
	StoredKey  []byte `json:"stored_key,omitempty"`
	ServerKey  []byte `json:"server_key,omitempty"`
}

func encodeScramChanges(m map[scramKey]*scramCred) ([]byte, error) {
	f := scramFileV1{Version: 1, Credentials: make([]scramFileEntryV1, 0, len(m))}
	for k, c := range m {
		e := scramFileEntryV1{User: k.user, Mechanism: k.mech, Deleted: c == nil}
		if c != nil {
			e.Salt, e.Iterations, e.StoredKey, e.ServerKey = c.salt, c.iterations, c.storedKey, c.serverKey
		}
		f.Credentials = append(f.Credentials, e)
	}
	slices.SortFunc(f.Credentials, func(a, b scramFileEntryV1) int {
		if a.User != b.User {
			if a.User < b.User {
				return -1
			}
			return 1
		}
		if a.Mechanism < b.Mechanism {
			return -1
		}
		if a.Mechanism > b.Mechanism {
			return 1
		}
		return 0
	})
	return json.MarshalIndent(f, "", "\t")
}

// decodeScramChanges parses and validates the file: a credential that
// could not have been stored is corruption, not something to serve.
func decodeScramChanges(data []byte) (map[scramKey]*scramCred, error) {
	var f scramFileV1
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", scramFile, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: unknown version %d", scramFile, f.Version)
	}
	m := make(map[scramKey]*scramCred, len(f.Credentials))
	for _, e := range f.Credentials {
		k := scramKey{e.User, e.Mechanism}
		h := scramHashes[e.Mechanism]
		switch {
		case e.User == "":
			return nil, fmt.Errorf("%s: empty user name", scramFile)
		case h == nil:
			return nil, fmt.Errorf("%s: user %q: unknown mechanism %q", scramFile, e.User, e.Mechanism)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s: user %q %s listed twice", scramFile, e.User, e.Mechanism)
		}
		if e.Deleted {
			m[k] = nil
			continue
		}
		if e.Iterations < scramMinIterations || e.Iterations > scramMaxIterations ||
			len(e.StoredKey) != h().Size() || len(e.ServerKey) != h().Size() {
			return nil, fmt.Errorf("%s: user %q %s: invalid credential", scramFile, e.User, e.Mechanism)
		}
		if e.Salt == nil {
			e.Salt = []byte{}
		}
		m[k] = &scramCred{salt: e.Salt, iterations: e.Iterations, storedKey: e.StoredKey, serverKey: e.ServerKey}
	}
	return m, nil
}

// scramCredFromSalted derives what the server keeps from a client-salted
// password (what AlterUserScramCredentials carries).
func scramCredFromSalted(mech string, salt, salted []byte, iterations int) *scramCred {
	h := scramHashes[mech]
	clientKey := scramHMAC(h, salted, []byte("Client Key"))
	hh := h()
	hh.Write(clientKey)
	return &scramCred{
		salt:       slices.Clone(salt),
		iterations: iterations,
		storedKey:  hh.Sum(nil),
		serverKey:  scramHMAC(h, salted, []byte("Server Key")),
	}
}

package sasl

// The SCRAM credential store: credentials changed through
// AlterUserScramCredentials (KIP-554), over those derived at start.
//
// The effective credential of a (user, mechanism) is the API's change if
// there is one, else the one derived at start from Config.Users. An API
// change therefore wins over the start-up set until the API changes it
// again: an upsert replaces a start-up password; deleting a start-up user's
// credential leaves a tombstone so it stays deleted across restarts;
// deleting a credential that only the API created drops the entry (a
// start-up user of that name added later would then show through).
//
// Changes are kept in <dir>/scram_credentials.json (StoreFile), rewritten
// whole and atomically (tmp, fsync, rename, fsync dir) on each Alter before
// it is answered; with an in-memory FS they live in memory. The file holds
// what Kafka's metadata log holds (salt, iterations, StoredKey, ServerKey),
// never a password or salted password; doc.go gives its format.
//
// The broker opens the store with its other storage; a file that cannot be
// read or decoded stops the broker from starting, as other damaged
// metadata does (failing open could resurrect a credential that a
// tombstone revokes).
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
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// StoreFile is the store's file name in its directory.
const StoreFile = "scram_credentials.json"

// Kafka's iteration bounds for SCRAM-SHA-256 and -512
// (ScramMechanism.minIterations/maxIterations).
const (
	MinIterations = DefaultSCRAMIterations
	MaxIterations = 16384
)

// scramMechTypes are the wire's mechanism numbers (1, 2), in order.
var scramMechTypes = []string{1: ScramSHA256, 2: ScramSHA512}

// MechanismName is the name of the wire's SCRAM mechanism number t, or ""
// if unknown.
func MechanismName(t int8) string {
	if t <= 0 || int(t) >= len(scramMechTypes) {
		return ""
	}
	return scramMechTypes[t]
}

type storeKey struct{ user, mech string }

// Store holds the SCRAM credentials: those changed through the API over
// the start-up ones. Its methods are safe for concurrent use.
type Store struct {
	fs      vfs.FS
	file    string                      // <dir>/scram_credentials.json
	startup map[string]map[string]*Cred // mechanism → user; read-only

	mu      sync.RWMutex
	changes map[storeKey]*Cred // nil value: deleted (tombstone)
	tokens  TokenSource        // delegation tokens for tokenauth logins; nil: off
}

// TokenSource resolves a delegation token for a SCRAM tokenauth login.
type TokenSource interface {
	// TokenCred is the token's credential for mech, the name of its
	// owner and its expiry; ok is false for an unknown or expired token.
	TokenCred(tokenID, mech string) (cred *Cred, owner string, expires time.Time, ok bool)
}

// SetTokens enables SCRAM logins with the delegation tokens of t.
func (s *Store) SetTokens(t TokenSource) {
	s.mu.Lock()
	s.tokens = t
	s.mu.Unlock()
}

func (s *Store) tokenSource() TokenSource {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tokens
}

// OpenStore loads the credentials changed through the API, kept in dir,
// over the start-up users of srv (nil: none, SASL is off).
func OpenStore(fsys vfs.FS, dir string, srv *Server) (*Store, error) {
	s := &Store{fs: fsys, file: path.Join(dir, StoreFile)}
	if srv != nil {
		s.startup = srv.scram
	}
	data, err := vfs.ReadFile(fsys, s.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.changes, err = map[storeKey]*Cred{}, nil
	case err == nil:
		s.changes, err = decodeChanges(data)
	}
	if err != nil {
		return nil, fmt.Errorf("loading SCRAM credentials from %s: %w", s.file, err)
	}
	return s, nil
}

// Get is user's credential for mech, nil if it has none.
func (s *Store) Get(user, mech string) *Cred {
	s.mu.RLock()
	c, changed := s.changes[storeKey{user, mech}]
	s.mu.RUnlock()
	if changed {
		return c
	}
	return s.startup[mech][user]
}

// users returns every user with at least one credential, sorted.
func (s *Store) users() []string {
	seen := map[string]bool{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, m := range scramMechTypes[1:] {
		for u := range s.startup[m] {
			if c, changed := s.changes[storeKey{u, m}]; !changed || c != nil {
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

// Why a user's describe or alter failed; a *CredentialError wraps one of
// them (or, for a change that could not be stored, the storage error).
var (
	ErrDuplicateUser          = errors.New("sasl: user named twice")
	ErrNoCredential           = errors.New("sasl: no such credential")
	ErrUnacceptableCredential = errors.New("sasl: unacceptable credential")
	ErrUnknownMechanism       = errors.New("sasl: unknown SCRAM mechanism")
)

// CredentialError is one user's failure in Describe or Alter: Msg is
// Kafka's text for the client, Kind what it is.
type CredentialError struct {
	Kind error
	Msg  string
}

func (e *CredentialError) Error() string { return e.Msg }
func (e *CredentialError) Unwrap() error { return e.Kind }

// Description is one user's answer to Describe: the iterations of each
// mechanism it has a credential for (never salts or keys), or Err.
type Description struct {
	User  string
	Creds []CredInfo
	Err   error
}

// CredInfo is a credential as described: the wire's mechanism number and
// its iterations.
type CredInfo struct {
	Mechanism  int8
	Iterations int32
}

// Describe answers DescribeUserScramCredentials, as Kafka's
// ScramImage.describe: no users lists every user with a credential;
// otherwise each distinct name gets one answer, ErrNoCredential if it has
// no credential, ErrDuplicateUser if named more than once. Answers are
// sorted by user.
func (s *Store) Describe(users []string) []Description {
	var names []string
	dup := map[string]bool{}
	if len(users) == 0 {
		names = s.users()
	} else {
		for _, u := range users {
			if _, seen := dup[u]; seen {
				dup[u] = true
				continue
			}
			dup[u] = false
			names = append(names, u)
		}
		sort.Strings(names)
	}
	out := make([]Description, 0, len(names))
	for _, u := range names {
		d := Description{User: u}
		if dup[u] {
			d.Err = &CredentialError{ErrDuplicateUser, "Cannot describe SCRAM credentials for the same user twice in a single request: " + u}
			out = append(out, d)
			continue
		}
		for t, m := range scramMechTypes {
			if m == "" {
				continue
			}
			if c := s.Get(u, m); c != nil {
				d.Creds = append(d.Creds, CredInfo{Mechanism: int8(t), Iterations: int32(c.iterations)})
			}
		}
		if len(d.Creds) == 0 {
			d.Err = &CredentialError{ErrNoCredential, "Attempt to describe a user credential that does not exist: " + u}
		}
		out = append(out, d)
	}
	return out
}

// Change is one entry of AlterUserScramCredentials: a deletion, or an
// upsertion of a credential from a client-salted password.
type Change struct {
	User      string
	Mechanism int8 // the wire's number: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
	Delete    bool

	Salt, SaltedPassword []byte
	Iterations           int32
}

// AlterResult is one named user's outcome; Err nil: its change applied.
type AlterResult struct {
	User string
	Err  error
}

// Alter applies AlterUserScramCredentials' changes (deletions first, as
// the request lists them), as Kafka's controller does
// (ScramControlManager.alterCredentials). Validation is per user name, not
// per (user, mechanism): a name that appears twice, even for different
// mechanisms, fails with ErrDuplicateUser and none of its changes apply.
// An empty name is an unacceptable credential, an unknown mechanism
// ErrUnknownMechanism, deleting a credential that does not exist
// ErrNoCredential, iterations outside [MinIterations, MaxIterations] or an
// empty salted password an unacceptable credential (Kafka fails deriving
// the keys from the latter and answers UNKNOWN_SERVER_ERROR). The valid
// changes apply together, persisted first; new logins see them at once.
// Each named user gets one result, in the order of first appearance.
// stored is the error of persisting them, also in their results.
func (s *Store) Alter(changes []Change) (results []AlterResult, stored error) {
	var order []string // users in first-appearance order
	seen := map[string]bool{}
	errs := map[string]error{}
	set := map[string]storeKey{} // user → its one valid change
	creds := map[string]*Cred{}
	for _, c := range changes {
		if !seen[c.User] {
			seen[c.User] = true
			order = append(order, c.User)
		}
		if _, bad := errs[c.User]; bad {
			continue
		}
		if _, twice := set[c.User]; twice {
			delete(set, c.User)
			delete(creds, c.User)
			errs[c.User] = &CredentialError{ErrDuplicateUser, "A user credential cannot be altered twice in the same request"}
			continue
		}
		mech := MechanismName(c.Mechanism)
		switch {
		case c.User == "":
			errs[c.User] = &CredentialError{ErrUnacceptableCredential, "Username must not be empty"}
			continue
		case mech == "":
			errs[c.User] = &CredentialError{ErrUnknownMechanism, "Unknown SCRAM mechanism"}
			continue
		}
		if c.Delete {
			if s.Get(c.User, mech) == nil {
				errs[c.User] = &CredentialError{ErrNoCredential, "Attempt to delete a user credential that does not exist"}
				continue
			}
			set[c.User] = storeKey{c.User, mech}
			continue
		}
		switch {
		case c.Iterations < MinIterations:
			errs[c.User] = &CredentialError{ErrUnacceptableCredential, "Too few iterations"}
			continue
		case c.Iterations > MaxIterations:
			errs[c.User] = &CredentialError{ErrUnacceptableCredential, "Too many iterations"}
			continue
		case len(c.SaltedPassword) == 0:
			errs[c.User] = &CredentialError{ErrUnacceptableCredential, "Salted password must not be empty"}
			continue
		}
		set[c.User] = storeKey{c.User, mech}
		creds[c.User] = credFromSalted(mech, c.Salt, c.SaltedPassword, int(c.Iterations))
	}
	if len(set) > 0 {
		apply := make(map[storeKey]*Cred, len(set))
		for u, k := range set {
			apply[k] = creds[u] // nil for a deletion
		}
		if stored = s.apply(apply); stored != nil {
			for u := range set {
				errs[u] = &CredentialError{stored, "SCRAM credentials could not be stored"}
			}
		}
	}
	results = make([]AlterResult, 0, len(order))
	for _, u := range order {
		results = append(results, AlterResult{User: u, Err: errs[u]})
	}
	return results, stored
}

// apply replaces credentials (nil: delete) and persists the new set
// before it takes effect. Deletions must name existing credentials.
func (s *Store) apply(set map[storeKey]*Cred) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[storeKey]*Cred, len(s.changes)+len(set))
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
	data, err := encodeChanges(next)
	if err != nil {
		return err
	}
	// StoredKey and ServerKey allow an offline guess at the password:
	// owner-only.
	if err := vfs.WriteFileAtomic(s.fs, s.file, data, 0o600); err != nil {
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

func encodeChanges(m map[storeKey]*Cred) ([]byte, error) {
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

// decodeChanges parses and validates the file: a credential that
// could not have been stored is corruption, not something to serve.
func decodeChanges(data []byte) (map[storeKey]*Cred, error) {
	var f scramFileV1
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", StoreFile, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: unknown version %d", StoreFile, f.Version)
	}
	m := make(map[storeKey]*Cred, len(f.Credentials))
	for _, e := range f.Credentials {
		k := storeKey{e.User, e.Mechanism}
		h := scramHashes[e.Mechanism]
		switch {
		case e.User == "":
			return nil, fmt.Errorf("%s: empty user name", StoreFile)
		case h == nil:
			return nil, fmt.Errorf("%s: user %q: unknown mechanism %q", StoreFile, e.User, e.Mechanism)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s: user %q %s listed twice", StoreFile, e.User, e.Mechanism)
		}
		if e.Deleted {
			m[k] = nil
			continue
		}
		if e.Iterations < MinIterations || e.Iterations > MaxIterations ||
			len(e.StoredKey) != h().Size() || len(e.ServerKey) != h().Size() {
			return nil, fmt.Errorf("%s: user %q %s: invalid credential", StoreFile, e.User, e.Mechanism)
		}
		if e.Salt == nil {
			e.Salt = []byte{}
		}
		m[k] = &Cred{salt: e.Salt, iterations: e.Iterations, storedKey: e.StoredKey, serverKey: e.ServerKey}
	}
	return m, nil
}

// credFromSalted derives what the server keeps from a client-salted
// password (what AlterUserScramCredentials carries).
func credFromSalted(mech string, salt, salted []byte, iterations int) *Cred {
	h := scramHashes[mech]
	clientKey := scramHMAC(h, salted, []byte("Client Key"))
	hh := h()
	hh.Write(clientKey)
	return &Cred{
		salt:       slices.Clone(salt),
		iterations: iterations,
		storedKey:  hh.Sum(nil),
		serverKey:  scramHMAC(h, salted, []byte("Server Key")),
	}
}

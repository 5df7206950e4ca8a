// Package dtoken keeps delegation tokens (KIP-48): the broker's answers
// to CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken
// and DescribeDelegationToken, and the SCRAM credentials that let a
// client log in with a token (tokenauth=true).
//
// A token is a random ID (a UUID's string form, as Kafka's) and an HMAC:
// HmacSHA512 of the ID keyed by the secret (Kafka's
// delegation.token.secret.key, its UTF-8 bytes). The client's SCRAM
// password is the HMAC in standard base64; each token has a SCRAM-SHA-256
// and a SCRAM-SHA-512 credential with 4096 iterations derived from it, as
// Kafka's token cache does. The HMAC is never stored: it is recomputed
// from the secret, so a changed secret revokes every token.
//
// Timestamps follow Kafka's DelegationTokenControlManager: a new token
// expires after the expiry time (delegation.token.expiry.time.ms, 1 day)
// and can be renewed up to its max timestamp (issue time plus
// delegation.token.max.lifetime.ms, 7 days, or the request's shorter max
// lifetime). A token whose expiry or max timestamp has passed is expired:
// renewing or expiring it answers DELEGATION_TOKEN_EXPIRED and it no
// longer logs in; it is dropped by a sweep at most an hour later (Kafka's
// delegation.token.expiry.check.interval.ms), until which Describe still
// lists it, as Kafka's does.
//
// The broker's handlers ask the Manager and convert: OwnerOf picks a new
// token's owner, Describe filters the tokens a principal may see (the
// authorizer's part comes in as a function) and Code maps each refusal to
// Kafka's error code. Whether a connection may ask for tokens at all (not
// over a token's session) is the broker's. The package imports neither
// broker nor protocol (internal/lint checks that).
//
// # The file
//
// DataDir/delegation_tokens.json (File), mode 0600, is rewritten whole and
// atomically (temporary file, fsync, rename, directory fsync) before a
// change is answered. It holds the generated secret when none is
// configured and each token's ID, principals and timestamps (in
// milliseconds), which is what Kafka's metadata log holds:
//
//	{
//		"version": 1,
//		"secret": "<generated secret>",
//		"tokens": [
//			{"id": "…", "owner": "User:alice", "requester": "User:alice",
//			 "renewers": ["User:bob"], "issue_ms": 1, "max_ms": 2, "expiry_ms": 3}
//		]
//	}
//
// A file that does not decode stops the broker from starting, as other
// damaged metadata does.
package dtoken

import (
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/internal/vfs"
)

// File is the store's file name in its directory.
const File = "delegation_tokens.json"

// Kafka's defaults.
const (
	DefaultMaxLifetime = 7 * 24 * time.Hour // delegation.token.max.lifetime.ms
	DefaultExpiryTime  = 24 * time.Hour     // delegation.token.expiry.time.ms
	SweepInterval      = time.Hour          // delegation.token.expiry.check.interval.ms
)

// Why a change was refused; the broker maps each to Kafka's code.
var (
	ErrNotFound      = errors.New("dtoken: no token with that HMAC")               // DELEGATION_TOKEN_NOT_FOUND
	ErrExpired       = errors.New("dtoken: token expired")                         // DELEGATION_TOKEN_EXPIRED
	ErrOwnerMismatch = errors.New("dtoken: principal is not the owner or renewer") // DELEGATION_TOKEN_OWNER_MISMATCH
	ErrPrincipalType = errors.New("dtoken: renewer is not a User principal")       // INVALID_PRINCIPAL_TYPE
)

// UserType is the only principal type a renewer may have.
const UserType = "User"

// Principal is a Kafka principal, User:alice.
type Principal struct{ Type, Name string }

func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal splits "Type:Name" at the first colon.
func ParsePrincipal(s string) (Principal, error) {
	t, n, ok := strings.Cut(s, ":")
	if !ok || t == "" {
		return Principal{}, fmt.Errorf("principal %q: want Type:Name", s)
	}
	return Principal{t, n}, nil
}

// Token is one delegation token; times are Unix milliseconds.
type Token struct {
	ID                 string
	Owner, Requester   Principal
	Renewers           []Principal
	Issue, Max, Expiry int64
	HMAC               []byte
	creds              map[string]*sasl.Cred // mechanism → credential, derived on first use
}

// OwnerOrRenewer reports whether p owns, requested or may renew the token
// (Kafka's TokenInformation.ownerOrRenewer, which Describe uses).
func (t *Token) OwnerOrRenewer(p Principal) bool {
	return t.Owner == p || t.Requester == p || slices.Contains(t.Renewers, p)
}

// mayRenew: the owner or a renewer, not the requester (Kafka's controller
// allowedToRenew).
func (t *Token) mayRenew(p Principal) bool {
	return t.Owner == p || slices.Contains(t.Renewers, p)
}

func (t *Token) expired(now int64) bool { return t.Max < now || t.Expiry < now }

// Config sets the manager up; zero durations are Kafka's defaults.
type Config struct {
	Secret      string // empty: generated once and kept in the file
	MaxLifetime time.Duration
	ExpiryTime  time.Duration
	Now         func() time.Time // nil: time.Now
}

// Manager holds the tokens. Its methods are safe for concurrent use.
type Manager struct {
	fs          vfs.FS
	file        string
	secret      string
	genSecret   string // the generated secret the file keeps; "" when configured
	maxLifetime int64
	expiryTime  int64
	now         func() time.Time

	mu        sync.Mutex
	tokens    map[string]*Token // by ID
	byHMAC    map[string]*Token // by string(HMAC)
	lastSweep int64
}

// Open loads the tokens kept in dir, generating and storing a secret on
// first start when cfg has none.
func Open(fsys vfs.FS, dir string, cfg Config) (*Manager, error) {
	m := &Manager{
		fs: fsys, file: path.Join(dir, File), secret: cfg.Secret,
		maxLifetime: cfg.MaxLifetime.Milliseconds(), expiryTime: cfg.ExpiryTime.Milliseconds(),
		now: cfg.Now, tokens: map[string]*Token{}, byHMAC: map[string]*Token{},
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.lastSweep = m.nowMs() // the first sweep an interval after start, as Kafka schedules it
	if cfg.MaxLifetime < 0 || cfg.ExpiryTime < 0 {
		return nil, errors.New("dtoken: negative token lifetime")
	}
	if m.maxLifetime == 0 {
		m.maxLifetime = DefaultMaxLifetime.Milliseconds()
	}
	if m.expiryTime == 0 {
		m.expiryTime = DefaultExpiryTime.Milliseconds()
	}
	data, err := vfs.ReadFile(fsys, m.file)
	var f fileV1
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case err == nil:
		f, err = decode(data)
	}
	if err != nil {
		return nil, fmt.Errorf("loading delegation tokens from %s: %w", m.file, err)
	}
	if m.secret == "" {
		m.genSecret = f.Secret
		if m.genSecret == "" {
			var b [32]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, err
			}
			m.genSecret = base64.RawURLEncoding.EncodeToString(b[:])
		}
		m.secret = m.genSecret
	}
	for _, e := range f.Tokens {
		t := &Token{ID: e.ID, Renewers: []Principal{}, Issue: e.IssueMs, Max: e.MaxMs, Expiry: e.ExpiryMs}
		if t.Owner, err = ParsePrincipal(e.Owner); err == nil {
			t.Requester, err = ParsePrincipal(e.Requester)
		}
		for _, r := range e.Renewers {
			p, perr := ParsePrincipal(r)
			if perr != nil {
				err = perr
			}
			t.Renewers = append(t.Renewers, p)
		}
		if err == nil && (t.ID == "" || m.tokens[t.ID] != nil) {
			err = fmt.Errorf("token ID %q empty or listed twice", t.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("loading delegation tokens from %s: %w", m.file, err)
		}
		m.add(t)
	}
	if f.Secret != m.genSecret {
		// First start (or a configured secret replaced a generated one):
		// keep what later starts need.
		if err := m.persist(m.tokens); err != nil {
			return nil, fmt.Errorf("dtoken: %w", err)
		}
	}
	return m, nil
}

// add indexes t, computing its HMAC. REQUIRES: m.mu held (or m unshared).
func (m *Manager) add(t *Token) {
	t.HMAC = m.hmac(t.ID)
	m.tokens[t.ID] = t
	m.byHMAC[string(t.HMAC)] = t
}

func (m *Manager) hmac(id string) []byte {
	h := hmac.New(sha512.New, []byte(m.secret))
	h.Write([]byte(id))
	return h.Sum(nil)
}

func (m *Manager) nowMs() int64 { return m.now().UnixMilli() }

// sweep drops expired tokens at most once per SweepInterval, returning
// whether any went (the caller persists). REQUIRES: m.mu held.
func (m *Manager) sweep(now int64) (dropped []*Token) {
	if now-m.lastSweep < SweepInterval.Milliseconds() {
		return nil
	}
	m.lastSweep = now
	for id, t := range m.tokens {
		if t.expired(now) {
			delete(m.tokens, id)
			delete(m.byHMAC, string(t.HMAC))
			dropped = append(dropped, t)
		}
	}
	return dropped
}

// Create issues a token for owner, requested by requester. maxLifetime
// (ms) > 0 shortens the configured max lifetime.
func (m *Manager) Create(owner, requester Principal, renewers []Principal, maxLifetime int64) (Token, error) {
	for _, r := range renewers {
		if r.Type != UserType {
			return Token{}, ErrPrincipalType
		}
	}
	now := m.nowMs()
	life := m.maxLifetime
	if maxLifetime > 0 {
		life = min(life, maxLifetime)
	}
	t := &Token{ID: newUUID(), Owner: owner, Requester: requester, Renewers: slices.Clone(renewers),
		Issue: now, Max: now + life}
	if t.Renewers == nil {
		t.Renewers = []Principal{}
	}
	t.Expiry = min(t.Max, now+m.expiryTime)
	m.mu.Lock()
	defer m.mu.Unlock()
	dropped := m.sweep(now)
	next := m.withChange(t, nil)
	if err := m.persist(next); err != nil {
		m.restore(dropped)
		return Token{}, err
	}
	m.add(t)
	return t.clone(), nil
}

// restore puts back swept tokens whose removal could not be stored.
func (m *Manager) restore(dropped []*Token) {
	for _, t := range dropped {
		m.tokens[t.ID], m.byHMAC[string(t.HMAC)] = t, t
	}
}

// withChange is the token set with t added or replaced, or gone removed.
// REQUIRES: m.mu held.
func (m *Manager) withChange(t, gone *Token) map[string]*Token {
	next := make(map[string]*Token, len(m.tokens)+1)
	for id, x := range m.tokens {
		next[id] = x
	}
	if t != nil {
		next[t.ID] = t
	}
	if gone != nil {
		delete(next, gone.ID)
	}
	return next
}

// find is the live token of hmac that who may renew.
// REQUIRES: m.mu held.
func (m *Manager) find(who Principal, hmacBytes []byte, now int64) (*Token, error) {
	t := m.byHMAC[string(hmacBytes)]
	switch {
	case t == nil:
		return nil, ErrNotFound
	case t.expired(now):
		return nil, ErrExpired
	case !t.mayRenew(who):
		return nil, ErrOwnerMismatch
	}
	return t, nil
}

// Renew extends the token of hmac by period ms (<= 0, or more than the
// configured expiry time: the expiry time), never past its max timestamp,
// and returns the new expiry.
func (m *Manager) Renew(who Principal, hmacBytes []byte, period int64) (int64, error) {
	now := m.nowMs()
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.find(who, hmacBytes, now)
	if err != nil {
		return 0, err
	}
	life := m.expiryTime
	if period > 0 {
		life = min(life, period)
	}
	return m.setExpiry(t, min(t.Max, now+life))
}

// Expire sets the token's expiry period ms from now (never past its max
// timestamp) and returns it; a negative period removes the token at once
// and returns now (what Kafka 4.4 answers; TestKafkaDiffDelegationTokens).
func (m *Manager) Expire(who Principal, hmacBytes []byte, period int64) (int64, error) {
	now := m.nowMs()
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.find(who, hmacBytes, now)
	if err != nil {
		return 0, err
	}
	if period < 0 {
		if err := m.persist(m.withChange(nil, t)); err != nil {
			return 0, err
		}
		delete(m.tokens, t.ID)
		delete(m.byHMAC, string(t.HMAC))
		return now, nil
	}
	return m.setExpiry(t, min(t.Max, now+period))
}

// setExpiry stores t with a new expiry. REQUIRES: m.mu held.
func (m *Manager) setExpiry(t *Token, expiry int64) (int64, error) {
	u := t.clone()
	u.Expiry, u.creds = expiry, t.creds
	if err := m.persist(m.withChange(&u, nil)); err != nil {
		return 0, err
	}
	m.tokens[t.ID], m.byHMAC[string(t.HMAC)] = &u, &u
	return expiry, nil
}

// Tokens lists the tokens keep accepts (nil: all), by issue time then ID.
func (m *Manager) Tokens(keep func(*Token) bool) []Token {
	m.mu.Lock()
	if dropped := m.sweep(m.nowMs()); len(dropped) > 0 {
		if err := m.persist(m.tokens); err != nil {
			m.restore(dropped) // tried again at the next sweep
		}
	}
	all := make([]*Token, 0, len(m.tokens))
	for _, t := range m.tokens {
		all = append(all, t)
	}
	m.mu.Unlock()
	slices.SortFunc(all, func(a, b *Token) int {
		return cmp.Or(cmp.Compare(a.Issue, b.Issue), strings.Compare(a.ID, b.ID))
	})
	var out []Token
	for _, t := range all {
		if keep == nil || keep(t) {
			out = append(out, t.clone())
		}
	}
	return out
}

func (t *Token) clone() Token {
	c := *t
	c.Renewers = slices.Clone(t.Renewers)
	c.HMAC = slices.Clone(t.HMAC)
	c.creds = nil
	return c
}

// TokenCred is sasl.TokenSource's lookup: the SCRAM credential of a live
// token, its owner's name and its expiry.
func (m *Manager) TokenCred(id, mech string) (*sasl.Cred, string, time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tokens[id]
	if t == nil || t.expired(m.nowMs()) {
		return nil, "", time.Time{}, false
	}
	c := t.creds[mech]
	if c == nil {
		var err error
		if c, err = sasl.NewTokenCred(mech, base64.StdEncoding.EncodeToString(t.HMAC)); err != nil {
			return nil, "", time.Time{}, false
		}
		if t.creds == nil {
			t.creds = map[string]*sasl.Cred{}
		}
		t.creds[mech] = c
	}
	return c, t.Owner.Name, time.UnixMilli(t.Expiry), true
}

// newUUID is a random (version 4) UUID in its usual string form, the
// shape of Kafka's token IDs.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

type fileV1 struct {
	Version int           `json:"version"`
	Secret  string        `json:"secret,omitempty"`
	Tokens  []fileTokenV1 `json:"tokens"`
}

type fileTokenV1 struct {
	ID        string   `json:"id"`
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers,omitempty"`
	IssueMs   int64    `json:"issue_ms"`
	MaxMs     int64    `json:"max_ms"`
	ExpiryMs  int64    `json:"expiry_ms"`
}

func decode(data []byte) (fileV1, error) {
	var f fileV1
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("%s: %w", File, err)
	}
	if f.Version != 1 {
		return f, fmt.Errorf("%s: unknown version %d", File, f.Version)
	}
	return f, nil
}

// persist writes the token set. REQUIRES: m.mu held (or m unshared).
func (m *Manager) persist(tokens map[string]*Token) error {
	f := fileV1{Version: 1, Secret: m.genSecret, Tokens: make([]fileTokenV1, 0, len(tokens))}
	for _, t := range tokens {
		e := fileTokenV1{ID: t.ID, Owner: t.Owner.String(), Requester: t.Requester.String(),
			IssueMs: t.Issue, MaxMs: t.Max, ExpiryMs: t.Expiry}
		for _, r := range t.Renewers {
			e.Renewers = append(e.Renewers, r.String())
		}
		f.Tokens = append(f.Tokens, e)
	}
	slices.SortFunc(f.Tokens, func(a, b fileTokenV1) int { return strings.Compare(a.ID, b.ID) })
	data, err := json.MarshalIndent(f, "", "\t")
	if err != nil {
		return err
	}
	// The secret mints valid HMACs: owner-only.
	if err := vfs.WriteFileAtomic(m.fs, m.file, data, 0o600); err != nil {
		return fmt.Errorf("dtoken: writing %s: %w", File, err)
	}
	return nil
}

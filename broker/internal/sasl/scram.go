package sasl

// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka serves
// them: no channel binding, a user's authorization id must be empty or the
// user. With the tokenauth=true extension (KIP-48) the user is a
// delegation token's ID and the password its HMAC; the session belongs to
// the token's owner (TokenSource).
//
//	client-first  gs2-header client-first-bare
//	              gs2-header = ("n" | "y") "," ["a=" saslname] ","
//	              client-first-bare = "n=" saslname ",r=" c-nonce ["," ext]*
//	server-first  "r=" c-nonce s-nonce ",s=" base64(salt) ",i=" iterations
//	client-final  "c=" base64(gs2-header) ",r=" nonce ["," ext]* ",p=" base64(proof)
//	server-final  "v=" base64(ServerSignature)
//
// AuthMessage = client-first-bare "," server-first "," client-final-without-proof;
// ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage) and the server
// checks H(ClientKey) == StoredKey.

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

var scramHashes = map[string]func() hash.Hash{
	ScramSHA256: sha256.New,
	ScramSHA512: sha512.New,
}

// Cred is what the server keeps of a SCRAM password: never the password
// or the salted password, only what checks a proof (RFC 5802's StoredKey)
// and proves the server (ServerKey).
type Cred struct {
	salt                 []byte
	iterations           int
	storedKey, serverKey []byte
}

// Iterations is the credential's PBKDF2 iteration count.
func (c *Cred) Iterations() int { return c.iterations }

func newCred(h func() hash.Hash, pass string, iterations int) (*Cred, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	salted, err := pbkdf2.Key(h, pass, salt, iterations, h().Size())
	if err != nil {
		return nil, err
	}
	clientKey := scramHMAC(h, salted, []byte("Client Key"))
	hh := h()
	hh.Write(clientKey)
	return &Cred{
		salt:       salt,
		iterations: iterations,
		storedKey:  hh.Sum(nil),
		serverKey:  scramHMAC(h, salted, []byte("Server Key")),
	}, nil
}

// NewTokenCred derives a delegation token's SCRAM credential for mech
// from its password (the base64 HMAC), with Kafka's minimum iterations as
// Kafka's token cache does.
func NewTokenCred(mech, password string) (*Cred, error) {
	h := scramHashes[mech]
	if h == nil {
		return nil, fmt.Errorf("sasl: unknown SCRAM mechanism %q", mech)
	}
	return newCred(h, password, DefaultSCRAMIterations)
}

// ScramMechanisms are the SCRAM mechanisms a token has a credential for.
var ScramMechanisms = []string{ScramSHA256, ScramSHA512}

func scramHMAC(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

// scramClientFirst is a parsed client-first message.
type scramClientFirst struct {
	gs2Header  string // up to and including the second comma
	authzid    string // unescaped
	user       string // unescaped
	nonce      string
	extensions map[string]string
	bare       string // client-first-bare, verbatim
}

// parseScramClientFirst parses a client-first message.
func parseScramClientFirst(msg string) (*scramClientFirst, error) {
	m := &scramClientFirst{}
	if len(msg) < 3 || (msg[0] != 'n' && msg[0] != 'y') || msg[1] != ',' {
		// "p=" would ask for channel binding, which Kafka does not offer.
		return nil, errors.New("gs2 header: want n, or y,")
	}
	rest := msg[2:]
	comma := strings.IndexByte(rest, ',')
	if comma < 0 {
		return nil, errors.New("gs2 header: missing authzid separator")
	}
	if authz := rest[:comma]; authz != "" {
		if !strings.HasPrefix(authz, "a=") {
			return nil, errors.New("gs2 header: bad authzid")
		}
		name, err := scramUnescape(authz[2:])
		if err != nil {
			return nil, fmt.Errorf("authzid: %w", err)
		}
		m.authzid = name
	}
	m.gs2Header = msg[:2+comma+1]
	m.bare = rest[comma+1:]
	attrs := strings.Split(m.bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("client-first-bare: want n=user,r=nonce")
	}
	user, err := scramUnescape(attrs[0][2:])
	if err != nil {
		return nil, fmt.Errorf("user name: %w", err)
	}
	if user == "" {
		return nil, errors.New("empty user name")
	}
	m.user = user
	m.nonce = attrs[1][2:]
	if !validNonce(m.nonce) {
		return nil, errors.New("invalid nonce")
	}
	exts, err := scramExtensions(attrs[2:])
	if err != nil {
		return nil, err
	}
	m.extensions = exts
	return m, nil
}

func scramExtensions(attrs []string) (map[string]string, error) {
	var exts map[string]string
	for _, a := range attrs {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid extension %q", a)
		}
		if exts == nil {
			exts = map[string]string{}
		}
		exts[k] = v
	}
	return exts, nil
}

// validNonce: printable ASCII without ',' (RFC 5802 "printable").
func validNonce(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

// scramUnescape decodes a saslname: "=2C" is ',', "=3D" is '='; any other
// '=' or a raw ',' is invalid.
func scramUnescape(s string) (string, error) {
	if !strings.ContainsAny(s, "=,") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ',':
			return "", errors.New("unescaped ','")
		case '=':
			switch {
			case strings.HasPrefix(s[i:], "=2C"):
				b.WriteByte(',')
			case strings.HasPrefix(s[i:], "=3D"):
				b.WriteByte('=')
			default:
				return "", errors.New("invalid '=' escape")
			}
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// scramEscape is scramUnescape's inverse.
func scramEscape(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

// scramClientFinal is a parsed client-final message.
type scramClientFinal struct {
	channelBinding []byte
	nonce          string
	proof          []byte
	withoutProof   string
}

// parseScramClientFinal parses a client-final message.
func parseScramClientFinal(msg string) (*scramClientFinal, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return nil, errors.New("missing proof")
	}
	m := &scramClientFinal{withoutProof: msg[:i]}
	proof, err := base64.StdEncoding.Strict().DecodeString(msg[i+3:])
	if err != nil {
		return nil, fmt.Errorf("proof: %w", err)
	}
	m.proof = proof
	attrs := strings.Split(m.withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("want c=binding,r=nonce")
	}
	if m.channelBinding, err = base64.StdEncoding.Strict().DecodeString(attrs[0][2:]); err != nil {
		return nil, fmt.Errorf("channel binding: %w", err)
	}
	m.nonce = attrs[1][2:]
	if !validNonce(m.nonce) {
		return nil, errors.New("invalid nonce")
	}
	if _, err := scramExtensions(attrs[2:]); err != nil {
		return nil, err
	}
	return m, nil
}

// scramServer is one connection's SCRAM exchange.
type scramServer struct {
	mech string
	hash func() hash.Hash
	// lookup finds a user's credential when the client names it, so
	// changes through AlterUserScramCredentials apply to new logins.
	lookup func(user string) *Cred
	// tokens resolves tokenauth logins; nil: delegation tokens are off.
	tokens TokenSource

	user        string
	tokenID     string    // tokenauth: the token's ID (first.user)
	expires     time.Time // tokenauth: the token's expiry
	first       *scramClientFirst
	serverFirst string
	cred        *Cred
	nonce       string
	final       bool // client-first seen; next is client-final
}

// step evaluates one client message.
func (s *scramServer) step(token []byte) ([]byte, bool, *Failure) {
	if !s.final {
		first, err := parseScramClientFirst(string(token))
		if err != nil {
			return nil, false, genericFailure(s.mech, "invalid client-first message: "+err.Error())
		}
		s.user = first.user
		var cred *Cred
		if first.extensions["tokenauth"] == "true" {
			if s.tokens == nil {
				return nil, false, genericFailure(s.mech, "delegation tokens are not enabled")
			}
			c, owner, exp, ok := s.tokens.TokenCred(first.user, s.mech)
			if !ok {
				return nil, false, genericFailure(s.mech, "unknown or expired delegation token "+first.user)
			}
			// The session is the owner's, as Kafka's ScramSaslServer
			// makes the owner the authorization id.
			cred, s.tokenID, s.expires, s.user = c, first.user, exp, owner
		} else if cred = s.lookup(first.user); cred == nil {
			return nil, false, genericFailure(s.mech, "unknown user")
		}
		if first.authzid != "" && first.authzid != first.user {
			return nil, false, &Failure{Msg: "Authentication failed: Client requested an authorization id that is different from username", Reason: "authorization id differs from user"}
		}
		var rnd [24]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, false, genericFailure(s.mech, err.Error())
		}
		s.first, s.cred, s.final = first, cred, true
		s.nonce = first.nonce + base64.RawURLEncoding.EncodeToString(rnd[:])
		s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.salt) + ",i=" + strconv.Itoa(cred.iterations)
		return []byte(s.serverFirst), false, nil
	}
	if s.cred == nil {
		return nil, false, genericFailure(s.mech, "message after the exchange ended")
	}
	defer func() { s.cred = nil }() // one final message only
	fin, err := parseScramClientFinal(string(token))
	if err != nil {
		return nil, false, genericFailure(s.mech, "invalid client-final message: "+err.Error())
	}
	// librdkafka before 2.6.1 (librdkafka#4895) sends its own nonce once
	// more in front of the combined one. Kafka 3.8.1-3.9 accepted that
	// (a suffix check), Kafka 4 refuses it; we accept exactly that form so
	// the librdkafka 2.0 generation of clients keeps working. The server
	// nonce must be there either way, which is what defeats replays.
	if fin.nonce != s.nonce && fin.nonce != s.first.nonce+s.nonce {
		return nil, false, genericFailure(s.mech, "nonce mismatch")
	}
	if string(fin.channelBinding) != s.first.gs2Header {
		return nil, false, genericFailure(s.mech, "channel binding does not echo the gs2 header")
	}
	authMsg := []byte(s.first.bare + "," + s.serverFirst + "," + fin.withoutProof)
	clientSig := scramHMAC(s.hash, s.cred.storedKey, authMsg)
	if len(fin.proof) != len(clientSig) {
		return nil, false, genericFailure(s.mech, "proof has the wrong length")
	}
	clientKey := make([]byte, len(clientSig))
	subtle.XORBytes(clientKey, fin.proof, clientSig)
	h := s.hash()
	h.Write(clientKey)
	if subtle.ConstantTimeCompare(h.Sum(nil), s.cred.storedKey) != 1 {
		return nil, false, genericFailure(s.mech, "wrong password")
	}
	sig := scramHMAC(s.hash, s.cred.serverKey, authMsg)
	return []byte("v=" + base64.StdEncoding.EncodeToString(sig)), true, nil
}

package sasl

import (
	"crypto/pbkdf2"
	"crypto/subtle"
)

// CheckPassword reports whether pass is user's password under one of the
// user's SCRAM credentials (for HTTP basic authentication, where the
// client sends the password itself). It costs one PBKDF2 derivation per
// mechanism the user has; callers cache what succeeded.
func (s *Store) CheckPassword(user, pass string) bool {
	if s == nil || user == "" {
		return false
	}
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		c := s.Get(user, mech)
		if c == nil {
			continue
		}
		h := scramHashes[mech]
		salted, err := pbkdf2.Key(h, pass, c.salt, c.iterations, h().Size())
		if err != nil {
			continue
		}
		hh := h()
		hh.Write(scramHMAC(h, salted, []byte("Client Key")))
		if subtle.ConstantTimeCompare(hh.Sum(nil), c.storedKey) == 1 {
			return true
		}
	}
	return false
}

package broker

import (
	"crypto/pbkdf2"
	"crypto/subtle"
)

// CheckSCRAMPassword reports whether pass is user's password under one of
// the SCRAM credentials the broker keeps (the start-up users and those set
// through AlterUserScramCredentials): the HTTP basic authentication of
// the schema registry, Redpanda's model. It costs one PBKDF2 derivation
// per mechanism the user has; callers cache what succeeded.
func (b *Broker) CheckSCRAMPassword(user, pass string) bool {
	if b.scram == nil || user == "" {
		return false
	}
	for _, mech := range []string{SASLScramSHA256, SASLScramSHA512} {
		c := b.scram.get(user, mech)
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

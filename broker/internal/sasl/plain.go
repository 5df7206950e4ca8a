package sasl

// SASL/PLAIN (RFC 4616), as Kafka's PlainSaslServer serves it. Passwords
// are not kept: each user has a random salt and the SHA-256 of salt and
// password, derived at start.

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"unicode/utf8"
)

// parsePlain splits a SASL/PLAIN message:
// authzid NUL authcid NUL passwd, as Kafka's PlainSaslServer does (exactly
// three parts; empty ones are the caller's to reject).
func parsePlain(msg []byte) (authzid, user, pass string, err error) {
	if !utf8.Valid(msg) {
		return "", "", "", errors.New("SASL/PLAIN message is not UTF-8")
	}
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 {
		return "", "", "", fmt.Errorf("invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))
	}
	return string(parts[0]), string(parts[1]), string(parts[2]), nil
}

// plainStep checks the one PLAIN message.
func (x *Exchange) plainStep(token []byte) ([]byte, bool, *Failure) {
	authz, user, pass, perr := parsePlain(token)
	if perr != nil {
		return nil, false, genericFailure(Plain, perr.Error())
	}
	x.user, x.userKnown = user, true
	switch {
	case user == "":
		return nil, false, &Failure{Msg: "Authentication failed: username not specified", Reason: "empty user name"}
	case pass == "":
		return nil, false, &Failure{Msg: "Authentication failed: password not specified", Reason: "empty password"}
	}
	c, known := x.srv.plain[user]
	// Hash even for an unknown user, so timing does not tell.
	h := plainHash(c.salt, pass)
	if !known || subtle.ConstantTimeCompare(h[:], c.hash[:]) != 1 {
		reason := "wrong password"
		if !known {
			reason = "unknown user"
		}
		return nil, false, &Failure{Msg: "Authentication failed: Invalid username or password", Reason: reason}
	}
	if authz != "" && authz != user {
		return nil, false, &Failure{Msg: "Authentication failed: Client requested an authorization id that is different from username", Reason: "authorization id differs from user"}
	}
	return []byte{}, true, nil
}

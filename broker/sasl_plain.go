package broker

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// parsePlain splits a SASL/PLAIN message (RFC 4616):
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

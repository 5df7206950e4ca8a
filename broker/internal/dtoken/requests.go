package dtoken

// What the broker's four token handlers decide, apart from the
// connection (whether it may ask for tokens at all) and the authorizer.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// OwnerOf is a CreateDelegationToken's owner: the requester unless the
// request (v3, KIP-373) names another, whose type defaults to User.
func OwnerOf(requester Principal, name, typ *string) Principal {
	if name == nil || *name == "" {
		return requester
	}
	owner := Principal{Type: UserType, Name: *name}
	if typ != nil {
		owner.Type = *typ
	}
	return owner
}

// Describe is DescribeDelegationToken (Kafka's
// DelegationTokenManager.filterToken): with owners nil every token, with
// owners empty none, otherwise the tokens owned, requested or renewable by
// one of them; of those, the ones me owns, requested or may renew, and
// those visible allows (the authorizer's Describe on the token or
// DescribeTokens on its owner; nil: none).
func (m *Manager) Describe(me Principal, owners []Principal, visible func(*Token) bool) []Token {
	if owners != nil && len(owners) == 0 {
		return nil
	}
	return m.Tokens(func(t *Token) bool {
		if owners != nil && !anyOwnerOrRenewer(t, owners) {
			return false
		}
		return t.OwnerOrRenewer(me) || visible != nil && visible(t)
	})
}

func anyOwnerOrRenewer(t *Token, ps []Principal) bool {
	for _, p := range ps {
		if t.OwnerOrRenewer(p) {
			return true
		}
	}
	return false
}

// Code is the Kafka error code of a change's error: refused is true for
// the manager's refusals (ErrNotFound, ...); any other error is a failure
// to store, refused false and code 0, for the broker to map.
func Code(err error) (code int16, refused bool) {
	switch {
	case errors.Is(err, ErrNotFound):
		return kerr.DelegationTokenNotFound.Code, true
	case errors.Is(err, ErrExpired):
		return kerr.DelegationTokenExpired.Code, true
	case errors.Is(err, ErrOwnerMismatch):
		return kerr.DelegationTokenOwnerMismatch.Code, true
	case errors.Is(err, ErrPrincipalType):
		return kerr.InvalidPrincipalType.Code, true
	}
	return 0, false
}

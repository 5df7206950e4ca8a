package minikafka

import (
	"errors"
	"time"
)

// DelegationTokenConfig sets up Kafka's delegation tokens (KIP-48); see
// WithDelegationTokens. The names are Kafka's broker options.
type DelegationTokenConfig struct {
	// Secret is delegation.token.secret.key, the key of the tokens'
	// HMACs (HmacSHA512). Empty: a random one is generated on first start
	// and kept in the data dir. Changing it invalidates every token.
	Secret string
	// MaxLifetime is delegation.token.max.lifetime.ms: how long a token
	// can be renewed for at most; 0 means Kafka's 7 days.
	MaxLifetime time.Duration
	// ExpiryTime is delegation.token.expiry.time.ms: how long a new or
	// renewed token lives; 0 means Kafka's 1 day.
	ExpiryTime time.Duration
}

// WithDelegationTokens configures delegation tokens. They are on with
// WithSASL whether or not this option is given (with Kafka's defaults):
// a SASL-authenticated client creates, renews, expires and describes
// tokens (kadm's CreateDelegationToken and the rest, Kafka's Admin
// createDelegationToken), and another client logs in with SCRAM as the
// token's owner, the token ID as the user and the base64 HMAC as the
// password with tokenauth=true (kgo: scram.Auth{IsToken: true}). The
// tokens are kept in the data dir.
func WithDelegationTokens(cfg DelegationTokenConfig) Option {
	return optionFunc(func(c *config) { c.security.dtoken = &cfg })
}

// applyDelegationTokens checks the option and copies it into the SASL
// settings (nil when SASL is off).
func (s *securityConfig) applyDelegationTokens(out *securitySettings) error {
	d := s.dtoken
	switch {
	case d == nil:
		return nil
	case !s.saslOn:
		return errors.New("WithDelegationTokens without WithSASL")
	case d.MaxLifetime < 0 || d.ExpiryTime < 0:
		return errors.New("WithDelegationTokens: negative lifetime")
	}
	if out.sasl != nil {
		out.sasl.DelegationTokenSecret = d.Secret
		out.sasl.DelegationTokenMaxLifetime = d.MaxLifetime
		out.sasl.DelegationTokenExpiryTime = d.ExpiryTime
	}
	return nil
}

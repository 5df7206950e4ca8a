package oauth

import (
	"slices"
	"strings"
	"time"
)

// Config is the validator's configuration, Kafka's
// sasl.oauthbearer.* / unsecuredValidator* options.
type Config struct {
	// JWKS, when set, validates signed tokens against these keys
	// (sasl.oauthbearer.jwks.endpoint.url); nil means unsecured tokens.
	JWKS *KeySet
	// PrincipalClaim is the claim naming the principal
	// (unsecuredValidatorPrincipalClaimName, sasl.oauthbearer.sub.claim.name);
	// default "sub".
	PrincipalClaim string
	// ScopeClaim is the claim holding scopes (default "scope").
	ScopeClaim string
	// RequiredScopes must all be in the token's scope
	// (unsecuredValidatorRequiredScope).
	RequiredScopes []string
	// ClockSkew is the allowed clock difference
	// (unsecuredValidatorAllowableClockSkewMs, default 0;
	// sasl.oauthbearer.clock.skew.seconds, default 30 s, for signed tokens).
	// Negative means the default.
	ClockSkew time.Duration
	// Issuer and Audiences are checked when set
	// (sasl.oauthbearer.expected.issuer, .expected.audience).
	Issuer    string
	Audiences []string
}

// Result is a valid token's principal, expiry and scopes.
type Result struct {
	Principal string
	Expires   time.Time
	Scopes    []string
}

// Validate checks tok at now.
func Validate(cfg *Config, tok string, now time.Time) (*Result, error) {
	t, err := Parse(tok)
	if err != nil {
		return nil, err
	}
	skew := cfg.ClockSkew
	if cfg.JWKS == nil {
		if skew < 0 {
			skew = 0
		}
		if t.Alg != "none" {
			return nil, invalid("unsecured JWS must have alg none, not %q", t.Alg)
		}
		if len(t.Signature) != 0 {
			return nil, invalid("unsecured JWS must not contain a digital signature")
		}
	} else {
		if skew < 0 {
			skew = 30 * time.Second
		}
		if err := cfg.JWKS.Verify(t); err != nil {
			return nil, err
		}
	}
	pc := cfg.PrincipalClaim
	if pc == "" {
		pc = "sub"
	}
	principal, ok := t.String(pc)
	if !ok || strings.TrimSpace(principal) == "" {
		return nil, invalid("no principal claim %s with a non-empty string", pc)
	}
	exp, ok, verr := t.NumericDate("exp")
	if verr != nil {
		return nil, verr
	}
	if !ok {
		return nil, invalid("no exp claim")
	}
	if !now.Add(-skew).Before(exp) {
		return nil, invalid("the token expired at %v (now %v, clock skew %v)", exp, now, skew)
	}
	iat, ok, verr := t.NumericDate("iat")
	if verr != nil {
		return nil, verr
	}
	if ok {
		if now.Add(skew).Before(iat) {
			return nil, invalid("the token is issued in the future (%v)", iat)
		}
		if !exp.After(iat) {
			return nil, invalid("the token expires (%v) before it is issued (%v)", exp, iat)
		}
	}
	if nbf, ok, verr := t.NumericDate("nbf"); verr != nil {
		return nil, verr
	} else if ok && now.Add(skew).Before(nbf) {
		return nil, invalid("the token is not valid before %v", nbf)
	}
	if cfg.Issuer != "" {
		if iss, _ := t.String("iss"); iss != cfg.Issuer {
			return nil, invalid("issuer %q is not the expected %q", iss, cfg.Issuer)
		}
	}
	if len(cfg.Audiences) > 0 {
		auds := t.Audiences()
		if !slices.ContainsFunc(auds, func(a string) bool { return slices.Contains(cfg.Audiences, a) }) {
			return nil, invalid("audience %v is not one of %v", auds, cfg.Audiences)
		}
	}
	sc := cfg.ScopeClaim
	if sc == "" {
		sc = "scope"
	}
	scopes, verr := t.Scopes(sc)
	if verr != nil {
		return nil, verr
	}
	for _, req := range cfg.RequiredScopes {
		if !slices.Contains(scopes, req) {
			return nil, &Error{Status: "insufficient_scope", Scope: strings.Join(cfg.RequiredScopes, " "),
				Reason: "the token's scope " + strings.Join(scopes, " ") + " lacks " + req}
		}
	}
	return &Result{Principal: principal, Expires: exp, Scopes: scopes}, nil
}

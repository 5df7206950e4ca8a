package sasl

// SASL/OAUTHBEARER (RFC 7628, KIP-255, KIP-768), as Kafka's
// OAuthBearerSaslServer serves it.
//
// The client's first message is the GS2 header ("n,," or "n,a=<authzid>,")
// and %x01-separated key=value pairs ending in %x01%x01, one of them
// "auth=Bearer <token>"; other pairs are SASL extensions, which are
// accepted and ignored (Kafka's default validators check none). A message
// that does not parse fails like bad credentials elsewhere (the generic
// message). The token is checked by broker/internal/oauth: unsecured
// (alg none) without OAuthConfig.JWKSFile/JWKSURL, signed against the JWKS
// otherwise. A token that fails is answered, as Kafka does, with a
// challenge holding the error JSON ({"status":"invalid_token"}, with
// "scope" for insufficient_scope); the client acknowledges it with a lone
// %x01 and the exchange then fails with SASL_AUTHENTICATION_FAILED and that
// JSON as the message. An authzid other than the token's principal fails.
// The principal is the token's principal claim; the exchange reports the
// token's expiry (Exchange.Expires), at which the broker ends the session
// if MaxReauth does not end it first, and the client must re-authenticate
// with a new token of the same principal before then (as for SCRAM).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker/internal/oauth"
)

// OAuthConfig configures OAUTHBEARER's token validation; the names are
// Kafka's broker options.
type OAuthConfig struct {
	// JWKSFile or JWKSURL (sasl.oauthbearer.jwks.endpoint.url, file: or
	// https:) holds the keys signed tokens are checked against; with
	// neither, tokens are unsecured JWTs (alg none) for development.
	JWKSFile, JWKSURL string
	// Issuer and Audiences: sasl.oauthbearer.expected.issuer and
	// .expected.audience, checked when set.
	Issuer    string
	Audiences []string
	// PrincipalClaim (default "sub") and ScopeClaim (default "scope"):
	// sasl.oauthbearer.sub.claim.name / .scope.claim.name, or the
	// unsecured validator's unsecuredValidatorPrincipalClaimName /
	// ScopeClaimName.
	PrincipalClaim, ScopeClaim string
	// RequiredScopes must all be in a token's scope
	// (unsecuredValidatorRequiredScope; applied to signed tokens too).
	RequiredScopes []string
	// ClockSkew is the allowed clock difference; 0 means Kafka's default
	// (0 for unsecured tokens, 30 s for signed ones).
	ClockSkew time.Duration
}

// setupOAuth builds the validator when OAUTHBEARER is enabled.
func (s *Server) setupOAuth(cfg Config, mechs []string) error {
	want := false
	for _, m := range mechs {
		if strings.ToUpper(strings.TrimSpace(m)) == OAuthBearer {
			want = true
		}
	}
	if !want {
		return nil
	}
	oc := cfg.OAuth
	if oc == nil {
		return errors.New("SASL mechanism OAUTHBEARER needs an OAuth configuration")
	}
	v := &oauth.Config{PrincipalClaim: oc.PrincipalClaim, ScopeClaim: oc.ScopeClaim,
		RequiredScopes: oc.RequiredScopes, ClockSkew: oc.ClockSkew, Issuer: oc.Issuer, Audiences: oc.Audiences}
	if oc.ClockSkew == 0 {
		v.ClockSkew = -1
	}
	var load func() ([]byte, error)
	switch {
	case oc.JWKSFile != "" && oc.JWKSURL != "":
		return errors.New("OAUTHBEARER: give a JWKS file or a URL, not both")
	case oc.JWKSFile != "":
		f := oc.JWKSFile
		load = func() ([]byte, error) { return os.ReadFile(f) }
	case strings.HasPrefix(oc.JWKSURL, "file:"):
		f := strings.TrimPrefix(strings.TrimPrefix(oc.JWKSURL, "file:"), "//")
		load = func() ([]byte, error) { return os.ReadFile(f) }
	case oc.JWKSURL != "":
		u := oc.JWKSURL
		load = func() ([]byte, error) { return fetchJWKS(u) }
	}
	if load != nil {
		ks, err := oauth.NewKeySet(load)
		if err != nil {
			return fmt.Errorf("OAUTHBEARER JWKS: %w", err)
		}
		v.JWKS = ks
	}
	s.oauth = v
	return nil
}

func fetchJWKS(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 4<<20))
}

// parseOAuthClientFirst splits RFC 7628's client first message into the
// authzid and the bearer token.
func parseOAuthClientFirst(msg []byte) (authzid, token string, err error) {
	gs2, rest, ok := bytes.Cut(msg, []byte{1})
	if !ok {
		return "", "", errors.New("no %x01 after the GS2 header")
	}
	h := string(gs2)
	switch {
	case h == "n,,":
	case strings.HasPrefix(h, "n,a=") && strings.HasSuffix(h, ","):
		authzid = h[len("n,a=") : len(h)-1]
		if authzid == "" || strings.Contains(authzid, ",") {
			return "", "", errors.New("bad authzid")
		}
	default:
		return "", "", fmt.Errorf("bad GS2 header %q", h)
	}
	if !bytes.HasSuffix(rest, []byte{1, 1}) && !bytes.Equal(rest, []byte{1}) {
		return "", "", errors.New("message does not end with %x01%x01")
	}
	for _, kv := range bytes.Split(bytes.TrimSuffix(rest, []byte{1, 1}), []byte{1}) {
		k, v, ok := bytes.Cut(kv, []byte{'='})
		if !ok || len(k) == 0 {
			return "", "", errors.New("bad key=value pair")
		}
		if string(k) == "auth" {
			if token != "" {
				return "", "", errors.New("auth given twice")
			}
			scheme, t, ok := strings.Cut(string(v), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || t == "" {
				return "", "", errors.New("auth is not a Bearer token")
			}
			token = t
		}
	}
	if token == "" {
		return "", "", errors.New("no auth pair")
	}
	return authzid, token, nil
}

// oauthStep runs one OAUTHBEARER message.
func (x *Exchange) oauthStep(msg []byte) ([]byte, bool, *Failure) {
	if x.oauthErr != "" {
		// The client's answer to our error challenge: Kafka fails the
		// exchange with the error as the message.
		e, reason := x.oauthErr, x.oauthReason
		x.oauthErr, x.oauthReason = "", ""
		if !bytes.Equal(msg, []byte{1}) {
			reason += " (and the client did not answer the error with %x01)"
		}
		return nil, false, &Failure{Msg: e, Reason: reason}
	}
	x.expires = time.Time{}
	authzid, token, err := parseOAuthClientFirst(msg)
	if err != nil {
		return nil, false, genericFailure(OAuthBearer, "invalid OAUTHBEARER client first message: "+err.Error())
	}
	res, verr := oauth.Validate(x.srv.oauth, token, x.srv.now())
	if verr != nil {
		var oe *oauth.Error
		if !errors.As(verr, &oe) {
			return nil, false, genericFailure(OAuthBearer, verr.Error())
		}
		js := fmt.Sprintf(`{"status":%q`, oe.Status)
		if oe.Scope != "" {
			js += fmt.Sprintf(`, "scope":%q`, oe.Scope)
		}
		js += "}"
		x.oauthErr, x.oauthReason = js, oe.Reason
		return []byte(js), false, nil
	}
	x.user, x.userKnown = res.Principal, true
	if authzid != "" && authzid != res.Principal {
		return nil, false, &Failure{Msg: "Authentication failed: Client requested an authorization id that is different from the token's principal name",
			Reason: "authzid " + authzid + " differs from the token's principal"}
	}
	x.expires = res.Expires
	return []byte{}, true, nil
}

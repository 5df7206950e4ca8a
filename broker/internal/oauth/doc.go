// Package oauth validates the bearer tokens of SASL/OAUTHBEARER, as
// Kafka's two broker-side validators do:
//
//   - Unsecured (KIP-255, OAuthBearerUnsecuredValidatorCallbackHandler), for
//     development: a JWS with header {"alg":"none"} and an empty signature.
//     The principal claim (default "sub") must be a non-empty string, "exp"
//     a number not in the past (beyond the allowed clock skew), "iat" if
//     present not in the future; the scope claim (default "scope", a
//     space-separated string or a list) must hold every required scope.
//   - Signed (KIP-768, OAuthBearerValidatorCallbackHandler): a JWS signed
//     with RS256/384/512 or ES256/384 by a key of a JWKS (file or URL,
//     matched by "kid"), with "exp" required, "iat"/"nbf" checked when
//     present, and the issuer and audience checked when configured; the
//     clock skew default is Kafka's 30 s.
//
// A failed validation is an *Error with Kafka's status: "invalid_token", or
// "insufficient_scope" with the scope that was required; the SASL layer
// sends it to the client as the RFC 7628 error JSON.
//
// Parse is the JWT decoder (compact serialization only; no JWE): it bounds
// the token size and checks every part before any claim is used.
package oauth

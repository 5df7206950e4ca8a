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
// # What go-jose does, and what stays here
//
// Signed tokens are verified by github.com/go-jose/go-jose/v4: it decodes
// the JWKS keys (checking RSA moduli and exponents, EC points on their
// curve) and verifies the JWS, checking that the key fits the algorithm
// (an RSA key for RS*, the right curve for ES256/ES384) and the
// signature's size. The algorithms are fixed here (allowedAlgs: RS256,
// RS384, RS512, ES256, ES384) and go-jose refuses any other before
// verifying; the JWKS keeps only RSA (at least 2048 bits; go-jose skips
// those over 4096) and EC P-256/P-384 public keys, so neither "none" nor
// an HMAC keyed with a public key (algorithm confusion) can pass. go-jose
// is stricter than the decoder it replaced on the JWKS itself: key fields
// must be unpadded base64url and EC coordinates full length (RFC 7518), as
// identity providers publish them.
//
// Written here, because the library does not serve:
//   - The token size bound (MaxTokenBytes): go-jose bounds neither the
//     token nor its JSON, so Parse checks the size before anything is
//     decoded, then that the token has three parts and its header and
//     claims are JSON objects.
//   - Unsecured tokens (alg none): go-jose deliberately has no "none";
//     KIP-255's development validator is ours (Parse, then no signature).
//   - The claims (validate.go): Kafka's rules are not JWT's defaults
//     (a configurable principal and scope claim, the scope as a string or a
//     list, times in fractional seconds kept to the millisecond, a
//     non-number time refused), so claims are read, with our own checks,
//     from the same payload bytes whose signature go-jose verified.
//   - The JWKS size: the fetch reads at most 4 MiB (broker/internal/sasl).
package oauth

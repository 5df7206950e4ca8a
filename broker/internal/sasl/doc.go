// Package sasl is minikafka's SASL server side, as Kafka's
// security.authenticator serves it: the mechanisms (PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512, OAUTHBEARER), the credentials derived at start, and the
// SCRAM credential store that AlterUserScramCredentials changes.
//
// It takes a client's tokens and returns the server's answers; it knows
// nothing of Kafka requests, connections or error codes, and imports
// neither broker nor protocol nor franz-go (internal/lint checks that).
// The per-connection state machine (which request may come when, SASL
// handshake v0 raw tokens or v1 SaslAuthenticate frames, ILLEGAL_SASL_STATE,
// session expiry and re-authentication) is the broker's (broker/sasl.go):
// it opens an Exchange for each authentication a connection makes and
// feeds it the client's tokens. The broker's handlers 50 and 51 hand
// Describe and Alter the decoded request and turn the errors here
// (ErrDuplicateUser, ErrNoCredential, ...) into Kafka codes.
//
// # Mechanisms
//
// NewServer derives every credential from Config once: for PLAIN a random
// 16-byte salt and the SHA-256 of salt and password; for each SCRAM
// mechanism the RFC 5802 StoredKey and ServerKey from a random 32-byte salt
// and Config.Iterations (at least 4096, Kafka's minimum). The passwords
// themselves are not kept. The Server is read-only afterwards and shared by
// every connection.
//
//   - PLAIN (RFC 4616, plain.go): one message, authzid NUL user NUL
//     password; the hash is computed even for an unknown user, so timing
//     does not tell which users exist.
//   - SCRAM (RFC 5802, RFC 7677, scram.go): client-first, server-first,
//     client-final, server-final; no channel binding. The user's
//     credential is looked up in the Store at the client-first message, so
//     a change through AlterUserScramCredentials applies to the next login.
//     With the extension tokenauth=true (KIP-48) the user is a delegation
//     token's ID, looked up in the Store's TokenSource
//     (broker/internal/dtoken); the session is the token's owner's and
//     ends at the token's expiry.
//   - OAUTHBEARER (RFC 7628, KIP-255, KIP-768, oauth.go): the client's
//     bearer token is checked by broker/internal/oauth, unsecured (alg
//     none) or against a JWKS. A refused token gets Kafka's error
//     challenge and the exchange fails once the client acknowledges it.
//
// A Failure carries two texts: Msg, Kafka's words for the client, and
// Reason, for the broker's log only. Where Kafka does not tell an
// unauthenticated client why (unknown user, wrong proof, malformed
// message), Msg is the generic text, which the broker completes with the
// exchange's name (authentication or re-authentication).
//
// # Re-authentication
//
// Config.MaxReauth is Kafka's connections.max.reauth.ms (KIP-368): a
// session lasts that long (Server.Lifetime) and an OAUTHBEARER session no
// longer than its token (Exchange.Expires). A Session, which the broker
// keeps per connection, holds what completed exchanges leave: the
// principal, the delegation token used, the session's end and the last
// re-authentication's start. Session.Complete begins (or renews) it and
// refuses a re-authentication that ends with another user;
// Session.BeginReauth allows one re-authentication a second;
// Session.Expired and Session.LifetimeMillis answer for the end. The
// broker's state machine enforces them: a re-authentication is a new
// Exchange on the same connection, with the same mechanism, and after the
// session's end any request but SaslHandshake closes the connection.
//
// # The SCRAM store's file
//
// Changes made through AlterUserScramCredentials are kept in
// DataDir/scram_credentials.json (StoreFile), mode 0600, rewritten whole
// and atomically (temporary file, fsync, rename, directory fsync) before
// an Alter is answered. A change overrides the start-up credential of the
// same user and mechanism; a deleted start-up credential is kept as a
// tombstone so that it stays deleted across restarts. The file is JSON:
//
//	{
//		"version": 1,
//		"credentials": [
//			{
//				"user": "alice",
//				"mechanism": "SCRAM-SHA-256",
//				"salt": "<base64>",
//				"iterations": 4096,
//				"stored_key": "<base64>",
//				"server_key": "<base64>"
//			},
//			{"user": "bob", "mechanism": "SCRAM-SHA-512", "deleted": true}
//		]
//	}
//
// Entries are sorted by user, then mechanism; keys are the hash's size (32
// or 64 bytes) and iterations within [4096, 16384]. It holds what Kafka's
// metadata log holds, never a password or a salted password. A file that
// does not decode, or holds a credential that could not have been stored
// (unknown version or mechanism, empty user, duplicate entry, bad key
// size), fails OpenStore, and the broker does not start: serving without it
// could let a credential that a tombstone revokes log in again.
package sasl

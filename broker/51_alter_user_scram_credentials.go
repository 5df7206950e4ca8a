package broker

// AlterUserScramCredentials v0 (KIP-554).
//
// Behavior, as Kafka's controller (ScramControlManager.alterCredentials):
// validation is per user name, not per (user, mechanism): a name that
// appears twice among the deletions and upsertions, even for different
// mechanisms, gets DUPLICATE_RESOURCE ("A user credential cannot be
// altered twice in the same request") and none of its changes apply. An
// empty name is UNACCEPTABLE_CREDENTIAL, an unknown mechanism
// UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not exist
// RESOURCE_NOT_FOUND, iterations outside [4096, 16384]
// UNACCEPTABLE_CREDENTIAL. An empty salted password is refused with
// UNACCEPTABLE_CREDENTIAL too (Kafka fails deriving the keys from it and
// answers UNKNOWN_SERVER_ERROR). Valid changes apply together, persisted
// first (scram_store.go); new SCRAM logins see them at once, connections
// already authenticated are unaffected. Each named user gets one result.
// As in Kafka, credentials are stored whether or not SCRAM is enabled on
// the broker; a user created here has SCRAM credentials only, never a
// PLAIN password.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

type scramAlterError struct {
	code int16
	msg  string
}

func (b *Broker) handleAlterUserScramCredentials(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)

	var order []string // users in first-appearance order
	seen := map[string]bool{}
	note := func(u string) {
		if !seen[u] {
			seen[u] = true
			order = append(order, u)
		}
	}
	errs := map[string]scramAlterError{}
	set := map[string]scramKey{} // user → its one valid change
	creds := map[string]*scramCred{}
	dup := scramAlterError{kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request"}

	// admit records name's first appearance and returns the mechanism of
	// its change if the change may proceed: not already failed, the only
	// change of that user in the request (Kafka checks by user), a
	// non-empty name and a SCRAM mechanism.
	admit := func(name string, mechanism int8) (string, bool) {
		note(name)
		if _, bad := errs[name]; bad {
			return "", false
		}
		if _, twice := set[name]; twice {
			delete(set, name)
			delete(creds, name)
			errs[name] = dup
			return "", false
		}
		mech := scramMechName(mechanism)
		if e, bad := checkScramName(name, mech); bad {
			errs[name] = e
			return "", false
		}
		return mech, true
	}

	s := b.scram
	for _, d := range r.Deletions {
		mech, ok := admit(d.Name, d.Mechanism)
		if !ok {
			continue
		}
		if s.get(d.Name, mech) == nil {
			errs[d.Name] = scramAlterError{kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"}
			continue
		}
		set[d.Name] = scramKey{d.Name, mech}
	}
	for _, u := range r.Upsertions {
		mech, ok := admit(u.Name, u.Mechanism)
		if !ok {
			continue
		}
		switch {
		case u.Iterations < scramMinIterations:
			errs[u.Name] = scramAlterError{kerr.UnacceptableCredential.Code, "Too few iterations"}
			continue
		case u.Iterations > scramMaxIterations:
			errs[u.Name] = scramAlterError{kerr.UnacceptableCredential.Code, "Too many iterations"}
			continue
		case len(u.SaltedPassword) == 0:
			errs[u.Name] = scramAlterError{kerr.UnacceptableCredential.Code, "Salted password must not be empty"}
			continue
		}
		set[u.Name] = scramKey{u.Name, mech}
		creds[u.Name] = scramCredFromSalted(mech, u.Salt, u.SaltedPassword, int(u.Iterations))
	}

	if len(set) > 0 {
		changes := make(map[scramKey]*scramCred, len(set))
		for u, k := range set {
			changes[k] = creds[u] // nil for a deletion
		}
		if err := s.apply(b, changes); err != nil {
			b.log.Error("persisting SCRAM credentials", "err", err)
			for u := range set {
				errs[u] = scramAlterError{errCode(err), "SCRAM credentials could not be stored"}
			}
		}
	}
	for _, u := range order {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User = u
		if e, bad := errs[u]; bad {
			res.ErrorCode = e.code
			res.ErrorMessage = kmsg.StringPtr(e.msg)
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Response: resp}
}

func checkScramName(user, mech string) (scramAlterError, bool) {
	switch {
	case user == "":
		return scramAlterError{kerr.UnacceptableCredential.Code, "Username must not be empty"}, true
	case mech == "":
		return scramAlterError{kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"}, true
	}
	return scramAlterError{}, false
}

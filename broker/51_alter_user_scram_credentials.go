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
// first (internal/sasl: Store.Alter); new SCRAM logins see them at once, connections
// already authenticated are unaffected. Each named user gets one result.
// As in Kafka, credentials are stored whether or not SCRAM is enabled on
// the broker; a user created here has SCRAM credentials only, never a
// PLAIN password.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterUserScramCredentials(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	changes := make([]sasl.Change, 0, len(r.Deletions)+len(r.Upsertions))
	for _, d := range r.Deletions {
		changes = append(changes, sasl.Change{User: d.Name, Mechanism: d.Mechanism, Delete: true})
	}
	for _, u := range r.Upsertions {
		changes = append(changes, sasl.Change{User: u.Name, Mechanism: u.Mechanism,
			Salt: u.Salt, SaltedPassword: u.SaltedPassword, Iterations: u.Iterations})
	}
	results, err := b.scram.Alter(changes)
	if err != nil {
		b.log.Error("persisting SCRAM credentials", "err", err)
	}
	for _, a := range results {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User = a.User
		if a.Err != nil {
			res.ErrorCode = scramErrCode(a.Err)
			res.ErrorMessage = kmsg.StringPtr(a.Err.Error())
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Response: resp}
}

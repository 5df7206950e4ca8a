package broker

// DescribeUserScramCredentials v0 (KIP-554).
//
// Behavior, as Kafka's ScramImage.describe: null or empty Users lists
// every user with a credential; otherwise each distinct name gets one
// result, RESOURCE_NOT_FOUND if it has no credential, DUPLICATE_RESOURCE
// if named more than once. A result lists each mechanism with its
// iterations (never salts or keys). Users from the start-up options are
// listed like those created through AlterUserScramCredentials
// (internal/sasl). Results are sorted by user (Kafka's order is a hash
// map's). There is no authorizer, so no CLUSTER_AUTHORIZATION_FAILED.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeUserScramCredentials(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	var users []string
	for _, u := range r.Users {
		users = append(users, u.Name)
	}
	for _, d := range b.scram.Describe(users) {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = d.User
		if d.Err != nil {
			res.ErrorCode = scramErrCode(d.Err)
			res.ErrorMessage = kmsg.StringPtr(d.Err.Error())
		}
		for _, c := range d.Creds {
			info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
			info.Mechanism = c.Mechanism
			info.Iterations = c.Iterations
			res.CredentialInfos = append(res.CredentialInfos, info)
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Response: resp}
}

// scramErrCode is the Kafka code of a SCRAM credential's failure; one
// that is none of the store's own is a storage failure (errCode).
func scramErrCode(err error) int16 {
	switch {
	case errors.Is(err, sasl.ErrDuplicateUser):
		return kerr.DuplicateResource.Code
	case errors.Is(err, sasl.ErrNoCredential):
		return kerr.ResourceNotFound.Code
	case errors.Is(err, sasl.ErrUnacceptableCredential):
		return kerr.UnacceptableCredential.Code
	case errors.Is(err, sasl.ErrUnknownMechanism):
		return kerr.UnsupportedSaslMechanism.Code
	}
	return errCode(err)
}

package broker

// DescribeUserScramCredentials v0 (KIP-554).
//
// Behavior, as Kafka's ScramImage.describe: null or empty Users lists
// every user with a credential; otherwise each distinct name gets one
// result, RESOURCE_NOT_FOUND if it has no credential, DUPLICATE_RESOURCE
// if named more than once. A result lists each mechanism with its
// iterations (never salts or keys). Users from the start-up options are
// listed like those created through AlterUserScramCredentials
// (scram_store.go). Results are sorted by user (Kafka's order is a hash
// map's). There is no authorizer, so no CLUSTER_AUTHORIZATION_FAILED.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeUserScramCredentials(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	s := b.scram
	var names []string
	dup := map[string]bool{}
	if len(r.Users) == 0 {
		names = s.users()
	} else {
		for _, u := range r.Users {
			if _, seen := dup[u.Name]; seen {
				dup[u.Name] = true
				continue
			}
			dup[u.Name] = false
			names = append(names, u.Name)
		}
		sort.Strings(names)
	}
	for _, u := range names {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = u
		if dup[u] {
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u)
			resp.Results = append(resp.Results, res)
			continue
		}
		for t, m := range scramMechTypes {
			if m == "" {
				continue
			}
			if c := s.get(u, m); c != nil {
				info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				info.Mechanism = int8(t)
				info.Iterations = int32(c.iterations)
				res.CredentialInfos = append(res.CredentialInfos, info)
			}
		}
		if len(res.CredentialInfos) == 0 {
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + u)
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Response: resp}
}

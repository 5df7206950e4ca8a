package broker

// IncrementalAlterConfigs v0–v1.
//
// With the authorizer on, a resource needs ALTER_CONFIGS on its topic or group
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED) or, for the broker and its
// loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//
// Per config: SET (0), DELETE (1, back to the default), APPEND (2) and
// SUBTRACT (3) on list configs (on other types: INVALID_CONFIG); other ops:
// INVALID_REQUEST. Then as AlterConfigs: validated, persisted, applied.
// Broker resources: as AlterConfigs, the ops applied to the level's
// current set; APPEND and SUBTRACT on a key that is not a list:
// INVALID_CONFIG. Groups (type 32): SET and DELETE of the share.* and
// consumer.* configs. The resources are broker/internal/configs'.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleIncrementalAlterConfigs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	resp.Version = req.Version
	seen := map[string]int{}
	for _, rr := range r.Resources {
		seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)]++
	}
	az := b.authorizer(req)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rr := range r.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var code int16
		var err error
		if c := az.configResource(opAlterConfigs, rr.ResourceType, rr.ResourceName); c != 0 {
			code, err = c, errAuthorizationFailed
		} else {
			dup := seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1
			code, err = b.configs.IncrementalAlter(rr.ResourceType, rr.ResourceName, dup, r.ValidateOnly, rr.Configs)
		}
		if code != 0 {
			sr.ErrorCode, sr.ErrorMessage = code, errMessage(err)
			b.logBad(req, "incremental alter configs rejected", "resource", rr.ResourceName, "error", kerr.ErrorForCode(code), "reason", err)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Reply{Response: resp}
}

package broker

// AlterConfigs v0–v2.
//
// With the authorizer on, a resource needs ALTER_CONFIGS on its topic or group
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED) or, for the broker and its
// loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//
// Replaces a topic's whole set of configs (the non-incremental semantics:
// configs not named return to their defaults). The new set is validated
// like CreateTopics (INVALID_CONFIG), persisted in topic.json, then applied
// to every partition log. A resource named twice: INVALID_REQUEST.
// ValidateOnly checks only. A failed write (a full disk):
// KAFKA_STORAGE_ERROR, and nothing changes.
//
// Broker (type 4, name "" for the cluster default or this node's ID):
// dynamic broker configs, the whole set of that level
// replaced. A key Kafka cannot change at run time: INVALID_REQUEST
// "Cannot update these configs dynamically: Set(...)"; a per-broker key at
// the cluster default, a bare SSL store setting, a value of the wrong type,
// a null value or a key named twice: INVALID_REQUEST with Kafka's message.
// Broker loggers: INVALID_REQUEST. Client-metrics subscriptions (type
// 16): the subscription's set replaced, validated as Kafka does. The
// resources are broker/internal/configs'.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterConfigs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	resp.Version = req.Version
	seen := map[string]int{}
	for _, rr := range r.Resources {
		seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)]++
	}
	az := b.authorizer(req)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rr := range r.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if code := az.configResource(opAlterConfigs, rr.ResourceType, rr.ResourceName); code != 0 {
			sr.ErrorCode, sr.ErrorMessage = code, errMessage(errAuthorizationFailed)
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		dup := seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1
		if code, err := b.configs.Alter(rr.ResourceType, rr.ResourceName, dup, r.ValidateOnly, rr.Configs); code != 0 {
			sr.ErrorCode, sr.ErrorMessage = code, errMessage(err)
			b.logBad(req, "alter configs rejected", "resource", rr.ResourceName, "error", kerr.ErrorForCode(code), "reason", err)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Reply{Response: resp}
}

package broker

// AlterClientQuotas v0–v1 (KIP-546).
//
// Behavior, as Kafka's ClientQuotaControlManager: each entry is checked on
// its own and answered with its entity. The entity must be non-empty, name
// each type once, use only user, client-id and ip (ip alone, a valid
// address), and no name may be the empty string. Each set op's key must be
// valid for the entity (producer_byte_rate, consumer_byte_rate,
// request_percentage, controller_mutation_rate; connection_creation_rate
// for ip), its value above 0 and whole for the integral keys. A failure is
// INVALID_REQUEST with Kafka's message for that entry; removals are not
// checked (removing what is not set changes nothing). Ops apply in order,
// so a key given twice keeps its last value. With validate_only nothing
// changes. The valid entries are written to DataDir/client_quotas (whole,
// atomically) before the answer; a failed write (a full disk) answers them
// KAFKA_STORAGE_ERROR, what Kafka's controller answers for a storage
// failure, and changes nothing; the next request takes once there is space.

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterClientQuotas(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	resp.Version = req.Version
	entries := make([]quota.AlterEntry, len(r.Entries))
	for i, entry := range r.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		for _, e := range entry.Entity {
			ee := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = e.Type, e.Name
			re.Entity = append(re.Entity, ee)
			entries[i].Parts = append(entries[i].Parts, quota.Part{Type: e.Type, Name: e.Name})
		}
		for _, op := range entry.Ops {
			entries[i].Ops = append(entries[i].Ops, quota.Op{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
		resp.Entries = append(resp.Entries, re)
	}
	errs, applied, stored := b.quotas.AlterEntries(entries, r.ValidateOnly)
	for i, err := range errs {
		var inv *quota.InvalidError
		switch {
		case err == nil:
		case errors.As(err, &inv):
			resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
			b.logBad(req, "alter client quotas: entry rejected", "reason", err)
		default:
			resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = errCode(err), kmsg.StringPtr(err.Error())
		}
	}
	switch {
	case stored != nil:
		b.log.Error("alter client quotas: writing the quota file failed", "err", stored)
	case applied > 0:
		b.log.Info("client quotas altered", "entities", applied)
	}
	return protocol.Reply{Response: resp}
}

func quotaValueKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

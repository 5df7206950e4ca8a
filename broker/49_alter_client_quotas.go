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
	changes := map[string]quota.Change{}
	var applied []int
	for _, entry := range r.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		parts := make([]quota.Part, len(entry.Entity))
		for i, e := range entry.Entity {
			ee := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = e.Type, e.Name
			re.Entity = append(re.Entity, ee)
			parts[i] = quota.Part{Type: e.Type, Name: e.Name}
		}
		err := validateQuotaEntry(parts, entry.Ops)
		if err != nil {
			re.ErrorCode = kerr.InvalidRequest.Code
			re.ErrorMessage = kmsg.StringPtr(err.Error())
			b.logBad(req, "alter client quotas: entry rejected", "reason", err)
		} else if !r.ValidateOnly {
			ent, _ := quota.NewEntity(parts)
			c := changes[ent.Key()]
			c.Entity = ent
			for _, op := range entry.Ops {
				c.Ops = append(c.Ops, quota.Op{Key: op.Key, Value: op.Value, Remove: op.Remove})
			}
			changes[ent.Key()] = c
			applied = append(applied, len(resp.Entries))
		}
		resp.Entries = append(resp.Entries, re)
	}
	if len(changes) > 0 {
		if err := b.quotas.Alter(changes); err != nil {
			b.log.Error("alter client quotas: writing the quota file failed", "err", err)
			for _, i := range applied {
				resp.Entries[i].ErrorCode = errCode(err)
				resp.Entries[i].ErrorMessage = kmsg.StringPtr(err.Error())
			}
		} else {
			b.log.Info("client quotas altered", "entities", len(changes))
		}
	}
	return protocol.Reply{Response: resp}
}

func validateQuotaEntry(parts []quota.Part, ops []kmsg.AlterClientQuotasRequestEntryOp) error {
	ent, err := quota.NewEntity(parts)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if op.Remove {
			continue
		}
		if err := quota.ValidateValue(ent, op.Key, op.Value); err != nil {
			return err
		}
	}
	return nil
}

func quotaValueKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

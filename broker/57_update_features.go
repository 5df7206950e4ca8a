package broker

// UpdateFeatures v0–v2: the features, what may change and the answers are
// broker/internal/features' (its doc has the rules); transaction.version
// is the transaction coordinator's, which the table changes through
// features.Levels.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/features"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleUpdateFeatures(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.UpdateFeaturesRequest)
	resp := features.Update(r, req.Version, b.cfg.NodeID, b.txns, b.log, func(feature string, level int16, reason string) {
		b.logBad(req, "feature update refused", "feature", feature, "level", level, "reason", reason)
	})
	return protocol.Reply{Response: resp}
}

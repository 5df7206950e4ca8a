package broker

// UpdateFeatures v0–v2 and the features ApiVersions v3+ lists.
//
// The features are what this broker implements, fixed at build time:
// group.version 1 (KIP-848 consumer groups) and share.version 1 (KIP-932
// share groups), both finalized; transaction.version is listed as
// supported up to 0 and not finalized, so clients keep the explicit
// AddPartitionsToTxn/AddOffsetsToTxn flow (KIP-890 part 2 is only partly
// here: Produce v12 adds partitions implicitly and EndTxn v5 bumps the
// epoch, but TxnOffsetCommit does not add the offsets partition). Since a
// level cannot be changed, UpdateFeatures accepts an update to the level
// already finalized (a no-op) and refuses any other with
// INVALID_UPDATE_VERSION naming the feature, as Kafka refuses a level
// outside the supported range; an unknown feature is refused the same
// way.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// feature is one row of what ApiVersions advertises.
type feature struct {
	name      string
	min, max  int16 // supported
	finalized int16 // 0: not finalized (not listed as finalized)
}

var features = []feature{
	{"group.version", 0, 1, 1},
	{"share.version", 0, 1, 1},
	{"transaction.version", 0, 0, 0},
}

// featuresEpoch is the finalized features' epoch: they never change.
const featuresEpoch = 1

// addFeatures lists the features in an ApiVersions v3+ answer.
func addFeatures(resp *kmsg.ApiVersionsResponse) {
	for _, f := range features {
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = f.name, f.min, f.max
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		if f.finalized > 0 {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.name, f.finalized, f.finalized
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
	}
	resp.FinalizedFeaturesEpoch = featuresEpoch
}

func (b *Broker) handleUpdateFeatures(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.UpdateFeaturesRequest)
	resp := r.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	resp.Version = req.Version
	var firstErr *string
	for _, u := range r.FeatureUpdates {
		res := kmsg.NewUpdateFeaturesResponseResult()
		res.Feature = u.Feature
		if msg := checkFeatureUpdate(u); msg != "" {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidUpdateVersion.Code, &msg
			if firstErr == nil {
				firstErr = &msg
			}
			b.logBad(req, "feature update refused", "feature", u.Feature, "level", u.MaxVersionLevel)
		}
		resp.Results = append(resp.Results, res)
	}
	if req.Version >= 2 {
		// v2 has no per-feature results: the first refusal is the answer.
		resp.Results = nil
		if firstErr != nil {
			resp.ErrorCode, resp.ErrorMessage = kerr.InvalidUpdateVersion.Code, firstErr
		}
	}
	return protocol.Reply{Response: resp}
}

// checkFeatureUpdate is why u cannot be applied, "" when it is a no-op.
func checkFeatureUpdate(u kmsg.UpdateFeaturesRequestFeatureUpdate) string {
	for _, f := range features {
		if f.name != u.Feature {
			continue
		}
		level := max(u.MaxVersionLevel, 0)
		if level == f.finalized {
			return ""
		}
		if level < f.min || level > f.max {
			return fmt.Sprintf("Invalid update version %d for feature %s. Broker supports versions [%d, %d].", u.MaxVersionLevel, f.name, f.min, f.max)
		}
		return fmt.Sprintf("Feature %s is fixed at level %d on minikafka; it cannot be changed to %d.", f.name, f.finalized, u.MaxVersionLevel)
	}
	return fmt.Sprintf("Invalid update version for feature %s: this broker does not support it.", u.Feature)
}

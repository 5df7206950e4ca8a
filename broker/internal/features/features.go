// Package features is the features table: what ApiVersions v3+ lists
// (AddTo) and what UpdateFeatures v0–v2 may change (Update). The levels
// that change live with their owner, behind Levels: transaction.version
// is the transaction coordinator's, which persists it in its log. The
// broker's UpdateFeatures handler only decodes and logs.
//
// group.version 1 (KIP-848 consumer groups) and share.version 1 (KIP-932
// share groups) are what this broker implements, finalized and fixed:
// UpdateFeatures accepts an update to the level already finalized (a
// no-op) and refuses any other with INVALID_UPDATE_VERSION naming the
// feature.
//
// transaction.version is supported 0–2 and finalized at 2, as Kafka 4.x
// formats a new cluster (broker/internal/txn keeps the level, durably, in
// its transaction log). At 2 (KIP-890 part 2) a client that sees it
// finalized may use EndTxn v5 (the epoch bumped at every end, the new
// producer ID and epoch in the answer), Produce v12+ adding partitions
// to the transaction implicitly and TxnOffsetCommit v5 adding the group;
// clients that do not (older versions) keep the explicit
// AddPartitionsToTxn/AddOffsetsToTxn flow, request by request. Below 2
// those three versions are UNSUPPORTED_VERSION, as Kafka answers them.
// UpdateFeatures sets it, as Kafka's controller does: a lower level needs
// the upgrade type SAFE_DOWNGRADE or UNSAFE_DOWNGRADE (v0: allow
// downgrade), a level outside 0–2 or below 0 is refused with Kafka's
// reasons, validate_only changes nothing, and when one update of a
// request is refused none is applied. The finalized-features epoch grows
// with every change.
//
// An unknown feature is refused with INVALID_UPDATE_VERSION.
package features

import (
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/txn"
)

// Levels is the finalized levels that can change and their epoch: the
// transaction coordinator's (txn.Coordinator).
type Levels interface {
	TxnVersion() int16
	SetTxnVersion(level int16) error
	FeaturesEpoch() int64
}

// feature is one row of what ApiVersions advertises.
type feature struct {
	name      string
	min, max  int16 // supported
	finalized int16 // 0: not finalized (not listed as finalized)
}

// fixedFeatures are the features whose level cannot change.
var fixedFeatures = []feature{
	{"group.version", 0, 1, 1},
	{"share.version", 0, 1, 1},
}

const txnVersionFeature = "transaction.version"

// features is what ApiVersions lists now.
func features(l Levels) []feature {
	return append(fixedFeatures[:len(fixedFeatures):len(fixedFeatures)],
		feature{txnVersionFeature, 0, txn.MaxTxnVersion, l.TxnVersion()})
}

// AddTo lists the features in an ApiVersions v3+ answer. Before v4
// a supported range starting at 0 is left out, as Kafka leaves it out
// (KIP-1022: older clients take a minimum of 0 for a malformed range);
// the finalized levels are listed all the same.
func AddTo(resp *kmsg.ApiVersionsResponse, l Levels) {
	for _, f := range features(l) {
		if f.min > 0 || resp.Version >= 4 {
			sf := kmsg.NewApiVersionsResponseSupportedFeature()
			sf.Name, sf.MinVersion, sf.MaxVersion = f.name, f.min, f.max
			resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		}
		if f.finalized > 0 {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.name, f.finalized, f.finalized
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
	}
	resp.FinalizedFeaturesEpoch = l.FeaturesEpoch()
}

// Update answers an UpdateFeatures request of the given version, applying
// it to l unless it is validate-only or one of its updates is refused;
// refused is told of each refusal, log of what was finalized or failed.
func Update(r *kmsg.UpdateFeaturesRequest, version int16, nodeID int32, l Levels, log *slog.Logger, refused func(feature string, level int16, reason string)) *kmsg.UpdateFeaturesResponse {
	resp := r.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	resp.Version = version
	var firstErr *string
	txnLevel := int16(-1) // the transaction.version update, if any
	for _, u := range r.FeatureUpdates {
		res := kmsg.NewUpdateFeaturesResponseResult()
		res.Feature = u.Feature
		level, msg := checkUpdate(u, version, nodeID, l)
		if msg != "" {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidUpdateVersion.Code, &msg
			if firstErr == nil {
				firstErr = &msg
			}
			refused(u.Feature, u.MaxVersionLevel, msg)
		} else if u.Feature == txnVersionFeature {
			txnLevel = level
		}
		resp.Results = append(resp.Results, res)
	}
	if firstErr == nil && !r.ValidateOnly && txnLevel >= 0 && txnLevel != l.TxnVersion() {
		if err := l.SetTxnVersion(txnLevel); err != nil {
			log.Error("finalizing transaction.version", "level", txnLevel, "err", err)
			msg := "Unable to persist the feature update: " + err.Error()
			firstErr = &msg
			for i := range resp.Results {
				resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.KafkaStorageError.Code, &msg
			}
			if version >= 2 {
				resp.ErrorCode, resp.ErrorMessage = kerr.KafkaStorageError.Code, &msg
				resp.Results = nil
			}
			return resp
		}
		log.Info("transaction.version finalized", "level", txnLevel)
	}
	if version >= 2 {
		// v2 has no per-feature results: the first refusal is the answer,
		// worded as Kafka's controller words it.
		resp.Results = nil
		if firstErr != nil {
			msg := "The update failed for all features since the following feature had an error: " + *firstErr
			resp.ErrorCode, resp.ErrorMessage = kerr.InvalidUpdateVersion.Code, &msg
		}
	}
	return resp
}

// checkUpdate is the level u asks for and why it cannot be applied, ""
// when it can (or is a no-op).
func checkUpdate(u kmsg.UpdateFeaturesRequestFeatureUpdate, version int16, nodeID int32, l Levels) (int16, string) {
	level := u.MaxVersionLevel
	downgrade := u.UpgradeType == 2 || u.UpgradeType == 3 // SAFE_DOWNGRADE, UNSAFE_DOWNGRADE
	if version == 0 {
		level, downgrade = max(level, 0), u.AllowDowngrade // v0: below 1 removes the feature
	}
	for _, f := range features(l) {
		if f.name != u.Feature {
			continue
		}
		switch {
		case level == f.finalized:
			return level, ""
		case level < 0:
			return level, fmt.Sprintf("Invalid update version %d for feature %s. A feature version cannot be less than 0.", level, f.name)
		case level > f.max:
			return level, fmt.Sprintf("Invalid update version %d for feature %s. Local controller %d only supports versions %d-%d", level, f.name, nodeID, f.min, f.max)
		case f.name != txnVersionFeature:
			return level, fmt.Sprintf("Feature %s is fixed at level %d on minikafka; it cannot be changed to %d.", f.name, f.finalized, level)
		case level < f.finalized && !downgrade:
			return level, fmt.Sprintf("Invalid update version %d for feature %s. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.", level, f.name)
		}
		return level, ""
	}
	return level, fmt.Sprintf("Invalid update version for feature %s: this broker does not support it.", u.Feature)
}

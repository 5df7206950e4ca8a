package features

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// levels is an in-memory Levels.
type levels struct {
	v     int16
	epoch int64
	fail  error
}

func (l *levels) TxnVersion() int16    { return l.v }
func (l *levels) FeaturesEpoch() int64 { return l.epoch }
func (l *levels) SetTxnVersion(v int16) error {
	if l.fail != nil {
		return l.fail
	}
	l.v, l.epoch = v, l.epoch+1
	return nil
}

func update(version int16, validateOnly bool, ups ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesRequest {
	r := kmsg.NewPtrUpdateFeaturesRequest()
	r.Version, r.ValidateOnly, r.FeatureUpdates = version, validateOnly, ups
	return r
}

func up(name string, level int16, upgradeType int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	return u
}

// Update over a Levels alone: a fixed feature's own level is a no-op and
// any other refused; a downgrade needs its upgrade type; one refusal
// keeps the request's other updates from applying; validate_only applies
// nothing; v2 answers with the first refusal at the top; a level that
// cannot be persisted is KAFKA_STORAGE_ERROR for every result.
func TestUpdate(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	var refusals []string
	refused := func(f string, _ int16, _ string) { refusals = append(refusals, f) }
	l := &levels{v: 2, epoch: 1}

	resp := Update(update(1, false, up("group.version", 1, 1), up("share.version", 0, 3), up("transaction.version", 1, 1), up("nope", 1, 1)), 1, 7, l, log, refused)
	codes := []int16{0, kerr.InvalidUpdateVersion.Code, kerr.InvalidUpdateVersion.Code, kerr.InvalidUpdateVersion.Code}
	for i, res := range resp.Results {
		if res.ErrorCode != codes[i] {
			t.Errorf("result %d (%s): code %d, want %d", i, res.Feature, res.ErrorCode, codes[i])
		}
	}
	if len(refusals) != 3 || l.v != 2 || l.epoch != 1 {
		t.Fatalf("refusals %v, level %d epoch %d", refusals, l.v, l.epoch)
	}

	Update(update(1, true, up("transaction.version", 1, 2)), 1, 7, l, log, refused)
	if l.v != 2 {
		t.Fatalf("validate_only applied: level %d", l.v)
	}
	resp = Update(update(1, false, up("transaction.version", 1, 2)), 1, 7, l, log, refused)
	if resp.Results[0].ErrorCode != 0 || l.v != 1 || l.epoch != 2 {
		t.Fatalf("safe downgrade: %+v, level %d epoch %d", resp.Results, l.v, l.epoch)
	}
	resp = Update(update(2, false, up("transaction.version", 3, 1)), 2, 7, l, log, refused)
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.Results != nil || resp.ErrorMessage == nil {
		t.Fatalf("v2 refusal: %+v", resp)
	}

	l.fail = errors.New("disk full")
	resp = Update(update(1, false, up("transaction.version", 2, 1), up("group.version", 1, 1)), 1, 7, l, log, refused)
	for _, res := range resp.Results {
		if res.ErrorCode != kerr.KafkaStorageError.Code {
			t.Fatalf("unpersisted update: %+v", resp.Results)
		}
	}

	// ApiVersions: before v4 a range from 0 is left out, the finalized
	// levels never are.
	for _, v := range []int16{3, 4} {
		av := kmsg.NewPtrApiVersionsResponse()
		av.Version = v
		AddTo(av, l)
		wantSupported := map[int16]int{3: 0, 4: 3}[v]
		if len(av.SupportedFeatures) != wantSupported || len(av.FinalizedFeatures) != 3 || av.FinalizedFeaturesEpoch != l.epoch {
			t.Fatalf("v%d: %+v", v, av)
		}
	}
}

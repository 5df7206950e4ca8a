package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaStore keeps the registry's records in a compacted topic of the
// broker, read and written as any Kafka client would.
type kafkaStore struct {
	topic string
	opts  []kgo.Opt // how to reach the broker
	cl    *kgo.Client
	adm   *kadm.Client

	mu      sync.Mutex
	created bool // the topic is known to exist
}

func newKafkaStore(topic string, opts []kgo.Opt) (*kafkaStore, error) {
	cl, err := kgo.NewClient(append(slicesClone(opts),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)...)
	if err != nil {
		return nil, err
	}
	return &kafkaStore{topic: topic, opts: opts, cl: cl, adm: kadm.NewClient(cl)}, nil
}

func slicesClone(o []kgo.Opt) []kgo.Opt { return append([]kgo.Opt(nil), o...) }

func (s *kafkaStore) close() { s.cl.Close() }

// load calls fn for every record of the topic, oldest first, up to the
// end the topic had when load started. A missing topic is an empty one.
func (s *kafkaStore) load(ctx context.Context, fn func(key, value []byte)) error {
	ends, err := s.adm.ListEndOffsets(ctx, s.topic)
	if err != nil {
		return fmt.Errorf("listing the end of %s: %w", s.topic, err)
	}
	starts, err := s.adm.ListStartOffsets(ctx, s.topic)
	if err != nil {
		return fmt.Errorf("listing the start of %s: %w", s.topic, err)
	}
	want := map[int32]int64{} // partition → end offset still to reach
	var errs []error
	exists := false
	ends.Each(func(o kadm.ListedOffset) {
		switch {
		case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
		case o.Err != nil:
			errs = append(errs, fmt.Errorf("partition %d: %w", o.Partition, o.Err))
		default:
			exists = true
			start, ok := starts.Lookup(s.topic, o.Partition)
			if !ok || start.Err != nil || start.Offset < o.Offset {
				want[o.Partition] = o.Offset
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("listing offsets of %s: %w", s.topic, err)
	}
	s.setCreated(exists)
	if len(want) == 0 {
		return nil
	}
	parts := map[int32]kgo.Offset{}
	for p := range want {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(append(slicesClone(s.opts),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.topic: parts}),
		kgo.FetchMaxWait(100*time.Millisecond), // the end is known: no long waits at it
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(want) > 0 {
		// Our own records always leave one at end-1 (the cleaner never
		// touches the active segment); a quiet second covers an end that
		// compaction or another writer's markers left empty.
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		quiet := pctx.Err() != nil && fs.NumRecords() == 0
		cancel()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", s.topic, err)
		}
		if quiet || fs.IsClientClosed() {
			return nil
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("reading %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if !r.Attrs.IsControl() {
				fn(r.Key, r.Value)
			}
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return nil
}

func (s *kafkaStore) setCreated(v bool) {
	s.mu.Lock()
	s.created = s.created || v
	s.mu.Unlock()
}

// ensureTopic creates the topic, compacted, with one partition, unless it
// exists already.
func (s *kafkaStore) ensureTopic(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.created {
		return nil
	}
	compact := "compact"
	resp, err := s.adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, s.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating %s: %w", s.topic, err)
	}
	s.created = true
	return nil
}

// append writes recs in order to partition 0 and returns once the broker
// acknowledged them all.
func (s *kafkaStore) append(ctx context.Context, recs []record) error {
	if err := s.ensureTopic(ctx); err != nil {
		return err
	}
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: s.topic, Partition: 0, Key: r.key, Value: r.value}
	}
	if err := s.cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		return fmt.Errorf("writing to %s: %w", s.topic, err)
	}
	return nil
}

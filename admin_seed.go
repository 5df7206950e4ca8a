package minikafka

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker"
)

// Records, seeding and the waits beyond the high watermark over the
// control API (docs/control-api.md): seed.go and inspect.go as JSON.

func init() {
	adminRoutes = append(adminRoutes,
		adminRoute{"GET /v1/topics/{topic}/partitions/{partition}/records", adminRecords},
		adminRoute{"POST /v1/topics", adminCreateTopic},
		adminRoute{"POST /v1/topics/{topic}/records", adminSeed},
		adminRoute{"POST /v1/wait/topic", adminWaitTopic},
		adminRoute{"POST /v1/wait/group-stable", adminWaitGroupStable},
		adminRoute{"POST /v1/wait/lag-zero", adminWaitLagZero},
	)
}

// maxSeedRecords bounds one seeding request.
const maxSeedRecords = 10000

type headerJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// recordJSON is a record as JSON: key and value as text when they are
// UTF-8, always also as base64 (null key or value: both null).
type recordJSON struct {
	Partition   int32        `json:"partition"`
	Offset      int64        `json:"offset"`
	TimestampMs int64        `json:"timestamp_ms"`
	Key         *string      `json:"key"`
	KeyBase64   []byte       `json:"key_base64"`
	Value       *string      `json:"value"`
	ValueBase64 []byte       `json:"value_base64"`
	Headers     []headerJSON `json:"headers"`
}

func textOf(b []byte) *string {
	if b == nil || !utf8.Valid(b) {
		return nil
	}
	s := string(b)
	return &s
}

func queryInt64(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("%s %q: want an integer", name, v)
	}
	return n, nil
}

func adminRecords(b *Broker, r *http.Request) (any, error) {
	p, err := pathPartition(r)
	if err != nil {
		return nil, err
	}
	offset, err := queryInt64(r, "offset", 0)
	if err != nil {
		return nil, err
	}
	limit, err := queryInt64(r, "limit", 100)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 10000 {
		return nil, badRequest("limit %d: want 1..10000", limit)
	}
	committed := false
	switch iso := r.URL.Query().Get("isolation"); iso {
	case "", "read_uncommitted":
	case "read_committed":
		committed = true
	default:
		return nil, badRequest("isolation %q: want read_committed or read_uncommitted", iso)
	}
	topic := r.PathValue("topic")
	recs, next, err := b.Records(topic, p, offset, int(limit), committed)
	if errors.Is(err, broker.ErrUnknownPartition) {
		return nil, notFound("unknown topic or partition %s/%d", topic, p)
	}
	if err != nil {
		return nil, err
	}
	out := struct {
		Topic     string       `json:"topic"`
		Partition int32        `json:"partition"`
		Next      int64        `json:"next_offset"`
		Records   []recordJSON `json:"records"`
	}{topic, p, next, []recordJSON{}}
	for _, rec := range recs {
		j := recordJSON{Partition: rec.Partition, Offset: rec.Offset, TimestampMs: rec.Timestamp.UnixMilli(),
			Key: textOf(rec.Key), KeyBase64: rec.Key, Value: textOf(rec.Value), ValueBase64: rec.Value, Headers: []headerJSON{}}
		for _, h := range rec.Headers {
			j.Headers = append(j.Headers, headerJSON{h.Key, string(h.Value)})
		}
		out.Records = append(out.Records, j)
	}
	return out, nil
}

func adminCreateTopic(b *Broker, r *http.Request) (any, error) {
	var in struct {
		Topic      string            `json:"topic"`
		Partitions int32             `json:"partitions"`
		Configs    map[string]string `json:"configs"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.Topic == "" || in.Partitions < 0 {
		return nil, badRequest("want topic and partitions >= 0 (0: the broker default)")
	}
	if err := b.CreateTopic(r.Context(), in.Topic, in.Partitions, in.Configs); err != nil {
		return nil, kafkaAdminError(err)
	}
	return map[string]any{"ok": true, "topic": in.Topic}, nil
}

// kafkaAdminError maps a Kafka error to an HTTP status: the name says
// what went wrong, the status whose fault it is.
func kafkaAdminError(err error) error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err
	}
	switch ke {
	case kerr.TopicAlreadyExists:
		return &adminError{http.StatusConflict, err.Error()}
	case kerr.UnknownTopicOrPartition:
		return &adminError{http.StatusNotFound, err.Error()}
	case kerr.KafkaStorageError, kerr.NotEnoughReplicas, kerr.RequestTimedOut:
		return &adminError{http.StatusServiceUnavailable, err.Error()}
	}
	return &adminError{http.StatusBadRequest, err.Error()}
}

func adminSeed(b *Broker, r *http.Request) (any, error) {
	var in struct {
		Records []struct {
			Partition   int32        `json:"partition"`
			Key         *string      `json:"key"`
			KeyBase64   []byte       `json:"key_base64"`
			Value       *string      `json:"value"`
			ValueBase64 []byte       `json:"value_base64"`
			Headers     []headerJSON `json:"headers"`
			TimestampMs int64        `json:"timestamp_ms"`
		} `json:"records"`
		Transaction string `json:"transaction"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if len(in.Records) == 0 || len(in.Records) > maxSeedRecords {
		return nil, badRequest("want 1..%d records", maxSeedRecords)
	}
	topic := r.PathValue("topic")
	recs := make([]*kgo.Record, len(in.Records))
	for i, j := range in.Records {
		if j.Partition < 0 || (j.Key != nil && j.KeyBase64 != nil) || (j.Value != nil && j.ValueBase64 != nil) {
			return nil, badRequest("record %d: a partition >= 0, and key or key_base64 (value or value_base64), not both", i)
		}
		rec := &kgo.Record{Topic: topic, Partition: j.Partition, Key: j.KeyBase64, Value: j.ValueBase64}
		if j.Key != nil {
			rec.Key = []byte(*j.Key)
		}
		if j.Value != nil {
			rec.Value = []byte(*j.Value)
		}
		if j.TimestampMs != 0 {
			rec.Timestamp = time.UnixMilli(j.TimestampMs)
		}
		for _, h := range j.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
		}
		recs[i] = rec
	}
	var err error
	switch in.Transaction {
	case "":
		_, err = b.Seed(r.Context(), recs...)
	case "commit", "abort":
		_, err = b.SeedTransaction(r.Context(), in.Transaction == "commit", recs...)
	default:
		return nil, badRequest("transaction %q: want commit, abort or none", in.Transaction)
	}
	if err != nil {
		return nil, kafkaAdminError(err)
	}
	out := struct {
		Offsets []map[string]int64 `json:"offsets"`
	}{}
	for _, rec := range recs {
		out.Offsets = append(out.Offsets, map[string]int64{"partition": int64(rec.Partition), "offset": rec.Offset})
	}
	return out, nil
}

func adminWaitTopic(b *Broker, r *http.Request) (any, error) {
	var in struct {
		Topic     string `json:"topic"`
		TimeoutMs int64  `json:"timeout_ms"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.Topic == "" {
		return nil, badRequest("want topic")
	}
	return waitBody(r, in.TimeoutMs, func(ctx context.Context) error { return b.WaitTopic(ctx, in.Topic) })
}

func adminWaitGroupStable(b *Broker, r *http.Request) (any, error) {
	var in struct {
		Group     string `json:"group"`
		Members   int    `json:"members"`
		TimeoutMs int64  `json:"timeout_ms"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.Group == "" || in.Members < 0 {
		return nil, badRequest("want group and members >= 0")
	}
	return waitBody(r, in.TimeoutMs, func(ctx context.Context) error { return b.WaitGroupStable(ctx, in.Group, in.Members) })
}

func adminWaitLagZero(b *Broker, r *http.Request) (any, error) {
	var in struct {
		Group     string `json:"group"`
		Topic     string `json:"topic"`
		TimeoutMs int64  `json:"timeout_ms"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.Group == "" || in.Topic == "" {
		return nil, badRequest("want group and topic")
	}
	return waitBody(r, in.TimeoutMs, func(ctx context.Context) error { return b.WaitLagZero(ctx, in.Group, in.Topic) })
}

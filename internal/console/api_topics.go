package console

// Topics: list, describe (partitions, offsets, sizes, configs), create,
// delete, alter configs.

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type topicSummary struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Partitions int    `json:"partitions"`
	Internal   bool   `json:"internal"`
	// Records is the sum over partitions of end - start offset (an upper
	// bound: compaction and transaction markers leave gaps).
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"` // -1 when the broker does not say
}

type partitionView struct {
	Partition   int32  `json:"partition"`
	StartOffset int64  `json:"start_offset"`
	EndOffset   int64  `json:"end_offset"`
	Bytes       int64  `json:"bytes"`
	Error       string `json:"error,omitempty"`
}

type configView struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Source    string `json:"source"`
	Sensitive bool   `json:"sensitive"`
	Default   bool   `json:"default"`
}

type topicView struct {
	topicSummary
	PartitionList []partitionView `json:"partition_list"`
	Configs       []configView    `json:"configs"`
}

// offsetsAndSizes lists start and end offsets and log sizes of topics'
// partitions.
func (c *Console) offsetsAndSizes(ctx context.Context, topics kadm.TopicDetails) (starts, ends kadm.ListedOffsets, sizes map[string]map[int32]int64, err error) {
	names := topics.Names()
	if len(names) == 0 {
		return nil, nil, nil, nil
	}
	if starts, err = c.adm.ListStartOffsets(ctx, names...); err != nil {
		return
	}
	if ends, err = c.adm.ListEndOffsets(ctx, names...); err != nil {
		return
	}
	set := kadm.TopicsSet{}
	topics.EachPartition(func(p kadm.PartitionDetail) { set.Add(p.Topic, p.Partition) })
	sizes = map[string]map[int32]int64{}
	dirs, derr := c.adm.DescribeAllLogDirs(ctx, set)
	if derr != nil {
		return starts, ends, nil, nil // sizes are optional
	}
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if sizes[p.Topic] == nil {
				sizes[p.Topic] = map[int32]int64{}
			}
			sizes[p.Topic][p.Partition] += p.Size
		})
	})
	return starts, ends, sizes, nil
}

func summarize(td kadm.TopicDetail, starts, ends kadm.ListedOffsets, sizes map[string]map[int32]int64) (topicSummary, []partitionView) {
	s := topicSummary{Name: td.Topic, ID: kafkaUUID(td.ID), Partitions: len(td.Partitions), Internal: td.IsInternal}
	if sizes == nil {
		s.Bytes = -1
	}
	var ps []partitionView
	for _, p := range td.Partitions.Sorted() {
		pv := partitionView{Partition: p.Partition, StartOffset: -1, EndOffset: -1, Bytes: -1}
		if o, ok := starts.Lookup(td.Topic, p.Partition); ok && o.Err == nil {
			pv.StartOffset = o.Offset
		} else if ok {
			pv.Error = o.Err.Error()
		}
		if o, ok := ends.Lookup(td.Topic, p.Partition); ok && o.Err == nil {
			pv.EndOffset = o.Offset
		} else if ok {
			pv.Error = o.Err.Error()
		}
		if n, ok := sizes[td.Topic][p.Partition]; ok {
			pv.Bytes = n
			s.Bytes += n
		}
		if pv.StartOffset >= 0 && pv.EndOffset >= pv.StartOffset {
			s.Records += pv.EndOffset - pv.StartOffset
		}
		ps = append(ps, pv)
	}
	if ps == nil {
		ps = []partitionView{}
	}
	return s, ps
}

func (c *Console) listTopics(r *http.Request) (any, error) {
	ctx := r.Context()
	td, err := c.adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, err
	}
	starts, ends, sizes, err := c.offsetsAndSizes(ctx, td)
	if err != nil {
		return nil, err
	}
	out := []topicSummary{}
	for _, t := range td.Sorted() {
		if t.Err != nil {
			continue
		}
		s, _ := summarize(t, starts, ends, sizes)
		out = append(out, s)
	}
	return out, nil
}

// topicDetail looks up one topic, 404 when it does not exist.
func (c *Console) topicDetail(ctx context.Context, topic string) (kadm.TopicDetail, error) {
	td, err := c.adm.ListTopicsWithInternal(ctx, topic)
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return kadm.TopicDetail{}, err
	}
	d, ok := td[topic]
	if !ok || err != nil || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return d, errorf(http.StatusNotFound, "topic %q does not exist", topic)
	}
	if d.Err != nil {
		return d, d.Err
	}
	return d, nil
}

func (c *Console) describeTopic(r *http.Request) (any, error) {
	ctx := r.Context()
	topic := r.PathValue("topic")
	d, err := c.topicDetail(ctx, topic)
	if err != nil {
		return nil, err
	}
	starts, ends, sizes, err := c.offsetsAndSizes(ctx, kadm.TopicDetails{topic: d})
	if err != nil {
		return nil, err
	}
	s, ps := summarize(d, starts, ends, sizes)
	v := topicView{topicSummary: s, PartitionList: ps, Configs: []configView{}}
	rcs, err := c.adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return nil, rc.Err
		}
		for _, cf := range rc.Configs {
			v.Configs = append(v.Configs, configView{
				Name: cf.Key, Value: cf.MaybeValue(), Source: strings.ToLower(strings.TrimSuffix(cf.Source.String(), "_CONFIG")),
				Sensitive: cf.Sensitive, Default: cf.Source == kmsg.ConfigSourceDefaultConfig,
			})
		}
	}
	sort.Slice(v.Configs, func(i, j int) bool { return v.Configs[i].Name < v.Configs[j].Name })
	return v, nil
}

type createTopicReq struct {
	Name       string            `json:"name"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func (c *Console) createTopic(r *http.Request) (any, error) {
	var req createTopicReq
	if err := readJSON(r, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, errorf(http.StatusBadRequest, "name: required")
	}
	if req.Partitions == 0 {
		req.Partitions = -1 // the broker's default
	}
	if req.Partitions < -1 || req.Partitions > 10000 {
		return nil, errorf(http.StatusBadRequest, "partitions %d: want 1..10000 (or 0 for the broker's default)", req.Partitions)
	}
	var cfgs map[string]*string
	for k, v := range req.Configs {
		if cfgs == nil {
			cfgs = map[string]*string{}
		}
		cfgs[k] = &v
	}
	resp, err := c.adm.CreateTopic(r.Context(), req.Partitions, -1, cfgs, req.Name)
	if err != nil {
		return nil, err
	}
	if resp.Err != nil {
		return nil, withMessage(resp.Err, resp.ErrMessage)
	}
	c.awaitTopic(r.Context(), req.Name, true)
	return created{map[string]any{"name": resp.Topic, "id": kafkaUUID(resp.ID), "partitions": resp.NumPartitions}}, nil
}

func (c *Console) deleteTopic(r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	resp, err := c.adm.DeleteTopic(r.Context(), topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil, errorf(http.StatusNotFound, "topic %q does not exist", topic)
		}
		return nil, withMessage(err, resp.ErrMessage)
	}
	c.awaitTopic(r.Context(), topic, false)
	return map[string]string{"deleted": topic}, nil
}

// awaitTopic waits (up to 2 s) until metadata lists the topic, or no
// longer does. The broker's own Metadata shows a create or delete at once;
// what lags is this client's metadata cache (kadm reads through it, kept
// for MetadataMinAge), and the page reloads the list right after.
func (c *Console) awaitTopic(ctx context.Context, topic string, exists bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		td, err := c.adm.ListTopicsWithInternal(ctx, topic)
		d, ok := td[topic]
		if err == nil && (ok && d.Err == nil) == exists {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type alterConfigsReq struct {
	Set    map[string]string `json:"set"`
	Delete []string          `json:"delete"`
}

func (c *Console) alterConfigs(r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	var req alterConfigsReq
	if err := readJSON(r, &req); err != nil {
		return nil, err
	}
	var alters []kadm.AlterConfig
	for k, v := range req.Set {
		if k == "" {
			return nil, errorf(http.StatusBadRequest, "set: empty config name")
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	for _, k := range req.Delete {
		if k == "" {
			return nil, errorf(http.StatusBadRequest, "delete: empty config name")
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	if len(alters) == 0 {
		return nil, errorf(http.StatusBadRequest, "nothing to change: give set or delete")
	}
	if _, err := c.topicDetail(r.Context(), topic); err != nil {
		return nil, err
	}
	resps, err := c.adm.AlterTopicConfigs(r.Context(), alters, topic)
	if err != nil {
		return nil, err
	}
	for _, resp := range resps {
		if resp.Err != nil {
			return nil, withMessage(resp.Err, resp.ErrMessage)
		}
	}
	return map[string]string{"altered": topic}, nil
}

// withMessage keeps err (for statusOf) and adds the broker's message.
func withMessage(err error, msg string) error {
	if msg == "" {
		return err
	}
	return &msgError{err, msg}
}

type msgError struct {
	err error
	msg string
}

func (e *msgError) Error() string { return e.err.Error() + ": " + e.msg }
func (e *msgError) Unwrap() error { return e.err }

// kafkaUUID writes a topic ID as Kafka's tools and the CLI do (URL-safe
// base64 without padding), not kadm's standard base64.
func kafkaUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

package console

// The overview, transactions and producers, SCRAM users and forwarding.

import (
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/broker/uplink"
)

type overview struct {
	Info
	NowMillis     int64 `json:"now_ms"`
	UptimeSeconds int64 `json:"uptime_s"`
	// DataDirBytes is the size of the files under the data dir, or in
	// memory the partition logs' bytes; DataDirFiles -1 in memory.
	DataDirBytes int64 `json:"data_dir_bytes"`
	DataDirFiles int   `json:"data_dir_files"`
	Topics       int   `json:"topics"`
}

func (c *Console) overview(r *http.Request) (any, error) {
	info := c.cfg.Broker.Info()
	now := time.Now()
	o := overview{Info: info, NowMillis: now.UnixMilli(), UptimeSeconds: int64(now.Sub(info.Started).Seconds()), DataDirFiles: -1}
	if o.Listeners == nil {
		o.Listeners = []Listener{}
	}
	td, err := c.adm.ListTopics(r.Context())
	if err != nil {
		return nil, err
	}
	o.Topics = len(td)
	if info.DataDir != "" {
		o.DataDirBytes, o.DataDirFiles = c.dataDirSize(info.DataDir)
	} else if len(td) > 0 {
		dirs, err := c.adm.DescribeAllLogDirs(r.Context(), nil)
		if err != nil {
			return nil, err
		}
		dirs.Each(func(d kadm.DescribedLogDir) {
			d.Topics.Each(func(p kadm.DescribedLogDirPartition) { o.DataDirBytes += p.Size })
		})
	}
	return o, nil
}

type txnView struct {
	ID             string           `json:"id"`
	State          string           `json:"state"`
	ProducerID     int64            `json:"producer_id"`
	ProducerEpoch  int16            `json:"producer_epoch"`
	TimeoutMillis  int32            `json:"timeout_ms"`
	StartTimestamp int64            `json:"start_timestamp"`
	Partitions     map[string][]int `json:"partitions"`
	Error          string           `json:"error,omitempty"`
}

type producerView struct {
	Topic                 string `json:"topic"`
	Partition             int32  `json:"partition"`
	ProducerID            int64  `json:"producer_id"`
	ProducerEpoch         int16  `json:"producer_epoch"`
	LastSequence          int32  `json:"last_sequence"`
	LastTimestamp         int64  `json:"last_timestamp"`
	CoordinatorEpoch      int32  `json:"coordinator_epoch"`
	CurrentTxnStartOffset int64  `json:"current_txn_start_offset"`
}

// maxTxns bounds the transactions described in one answer.
const maxTxns = 1000

// transactions answers ListTransactions + DescribeTransactions, and
// DescribeProducers for every partition of every topic.
func (c *Console) transactions(r *http.Request) (any, error) {
	ctx := r.Context()
	out := struct {
		Transactions []txnView      `json:"transactions"`
		Producers    []producerView `json:"producers"`
		Truncated    bool           `json:"truncated"`
	}{Transactions: []txnView{}, Producers: []producerView{}}
	listed, err := c.adm.ListTransactions(ctx, nil, nil)
	if err != nil && !errors.Is(err, kerr.UnsupportedVersion) {
		return nil, err
	}
	var ids []string
	for _, l := range listed.Sorted() {
		if len(ids) == maxTxns {
			out.Truncated = true
			break
		}
		ids = append(ids, l.TxnID)
	}
	if len(ids) > 0 {
		described, err := c.adm.DescribeTransactions(ctx, ids...)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			d, ok := described[id]
			if !ok {
				continue
			}
			v := txnView{ID: id, State: d.State, ProducerID: d.ProducerID, ProducerEpoch: d.ProducerEpoch,
				TimeoutMillis: d.TimeoutMillis, StartTimestamp: d.StartTimestamp, Partitions: map[string][]int{}}
			if d.Err != nil {
				v.Error = d.Err.Error()
			}
			for t, ps := range d.Topics {
				for p := range ps {
					v.Partitions[t] = append(v.Partitions[t], int(p))
				}
				sort.Ints(v.Partitions[t])
			}
			out.Transactions = append(out.Transactions, v)
		}
	}
	td, err := c.adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	if len(td) == 0 {
		return out, nil
	}
	dp, err := c.adm.DescribeProducers(ctx, td.TopicsSet())
	if err != nil {
		return nil, err
	}
	for _, t := range dp {
		for _, p := range t.Partitions.Sorted() {
			for _, pr := range p.ActiveProducers.Sorted() {
				out.Producers = append(out.Producers, producerView{
					Topic: pr.Topic, Partition: pr.Partition, ProducerID: pr.ProducerID, ProducerEpoch: pr.ProducerEpoch,
					LastSequence: pr.LastSequence, LastTimestamp: pr.LastTimestamp, CoordinatorEpoch: pr.CoordinatorEpoch,
					CurrentTxnStartOffset: pr.CurrentTxnStartOffset,
				})
			}
		}
	}
	sort.Slice(out.Producers, func(i, j int) bool {
		a, b := out.Producers[i], out.Producers[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	return out, nil
}

type scramUser struct {
	User        string      `json:"user"`
	Credentials []scramCred `json:"credentials"`
	Error       string      `json:"error,omitempty"`
}

type scramCred struct {
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

// scramUsers answers DescribeUserScramCredentials for every user.
func (c *Console) scramUsers(r *http.Request) (any, error) {
	described, err := c.adm.DescribeUserSCRAMs(r.Context())
	if err != nil {
		return nil, err
	}
	out := []scramUser{}
	for _, d := range described {
		u := scramUser{User: d.User, Credentials: []scramCred{}}
		if d.Err != nil {
			u.Error = d.Err.Error()
		}
		for _, ci := range d.CredInfos {
			u.Credentials = append(u.Credentials, scramCred{Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].User < out[j].User })
	return out, nil
}

// forwarding is the state of every forwarded partition.
func (c *Console) forwarding(*http.Request) (any, error) {
	stats := c.cfg.Broker.ForwardStats()
	if stats == nil {
		stats = []uplink.ForwardStat{}
	}
	return stats, nil
}

// forwardingGroups is the last consumer group offset sync pass: per local
// group and forwarded partition, how far the upstream group lags.
func (c *Console) forwardingGroups(*http.Request) (any, error) {
	rows := c.cfg.Broker.ForwardGroupOffsets()
	if rows == nil {
		rows = []uplink.GroupOffsetSync{}
	}
	return rows, nil
}

package broker

import (
	"testing"

	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// BenchmarkProduceQuota: what quota bookkeeping costs produce. minikafka
// without quotas, minikafka with producer_byte_rate and request_percentage
// set for every client (default user and client ID) too high to throttle,
// so every request resolves its quotas and records both sensors, and kfake
// (which stores quotas but never enforces them) for scale.
func BenchmarkProduceQuota(b *testing.B) {
	withQuotas := benchPeer{"minikafka-quotas", func(b *testing.B, topic string, parts int32) string {
		br := newTestBroker(b, func(c *Config) {
			c.FS, c.DataDir = vfs.Default, b.TempDir()
			c.Sync = logstore.SyncPolicy{Mode: logstore.SyncNever}
		})
		createTopic(b, br, topic, parts)
		err := br.quotas.Alter(map[string]quota.Change{"": {
			Entity: quota.Entity{{Type: quota.TypeClient}, {Type: quota.TypeUser}},
			Ops:    []quota.Op{{Key: quota.ProducerByteRate, Value: 1e15}, {Key: quota.RequestPercentage, Value: 1e9}},
		}})
		if err != nil {
			b.Fatal(err)
		}
		return listen(b, br)
	}}
	ps := peers(false)
	benchProducePeers(b, []benchPeer{ps[0], withQuotas, ps[1]}, 100, 1, 1)
}

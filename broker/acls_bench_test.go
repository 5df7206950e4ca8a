package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// thousandACLs is 1000 bindings of which the last two let ANONYMOUS write
// and read topic: the rest name other principals, other topics, prefixes
// the topic does not have and groups, so a decision has bindings to look
// through (the literal "*" and every prefix).
func thousandACLs(topic string) []acl.Binding {
	var bs []acl.Binding
	for i := range 998 {
		b := acl.Binding{ResourceType: kmsg.ACLResourceTypeTopic, Name: fmt.Sprintf("other-%d", i), Pattern: kmsg.ACLResourcePatternTypeLiteral,
			Principal: fmt.Sprintf("User:u%d", i%50), Host: "*", Operation: kmsg.ACLOperationWrite, Permission: kmsg.ACLPermissionTypeAllow}
		switch i % 4 {
		case 1:
			b.Pattern, b.Name = kmsg.ACLResourcePatternTypePrefixed, fmt.Sprintf("p%d-", i)
		case 2:
			b.ResourceType, b.Operation = kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead
		case 3:
			b.Permission, b.Host = kmsg.ACLPermissionTypeDeny, "10.9.9.9"
		}
		bs = append(bs, b)
	}
	for _, op := range []acl.Operation{kmsg.ACLOperationWrite, kmsg.ACLOperationRead} {
		bs = append(bs, acl.Binding{ResourceType: kmsg.ACLResourceTypeTopic, Name: topic, Pattern: kmsg.ACLResourcePatternTypeLiteral,
			Principal: Anonymous, Host: "*", Operation: op, Permission: kmsg.ACLPermissionTypeAllow})
	}
	return bs
}

func aclBenchPeers() []benchPeer {
	start := func(withACLs bool) func(b *testing.B, topic string, parts int32) string {
		return func(b *testing.B, topic string, parts int32) string {
			br := newTestBroker(b, func(c *Config) {
				c.FS, c.DataDir = vfs.Default, b.TempDir()
				c.Sync = logstore.SyncPolicy{Mode: logstore.SyncNever}
				if withACLs {
					c.Authorizer = &AuthorizerConfig{}
				}
			})
			createTopic(b, br, topic, parts)
			if withACLs {
				bs := thousandACLs(topic)
				if _, err := br.acls.Create(bs); err != nil {
					b.Fatal(err)
				}
			}
			return listen(b, br)
		}
	}
	return []benchPeer{{"minikafka", start(false)}, {"minikafka-1000-acls", start(true)}, peers(false)[1]}
}

// BenchmarkProduceACLs: what the authorizer with 1000 ACLs costs produce,
// with small records (many requests per byte) against the authorizer off
// and kfake (no ACLs) for scale.
func BenchmarkProduceACLs(b *testing.B) {
	benchProducePeers(b, aclBenchPeers(), 100, 1, 1)
}

// BenchmarkFetchACLs: the same for fetch, with small fetches (64 KiB) so
// that the per-request check is as large a share as it gets.
func BenchmarkFetchACLs(b *testing.B) {
	benchConsumePeers(b, aclBenchPeers(), 16<<20, 64<<10, 64<<10)
}

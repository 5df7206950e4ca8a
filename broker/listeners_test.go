package broker

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// With Config.Listeners, Metadata, FindCoordinator and DescribeCluster
// answer with the advertised address of the request's listener; requests
// of no known listener get the first one's.
func TestAdvertisedForListener(t *testing.T) {
	b := newTestBroker(t, func(c *Config) {
		c.Listeners = []Listener{{Name: "INTERNAL", Host: "minikafka", Port: 9092}, {Name: "EXTERNAL", Host: "localhost", Port: 29092}}
	})
	if h, p := b.Advertised(); h != "minikafka" || p != 9092 {
		t.Fatalf("Advertised %s:%d, want the first listener's", h, p)
	}
	ask := func(listener string, req kmsg.Request) kmsg.Response {
		rep := b.Serve(context.Background(), &protocol.Request{Key: req.Key(), Version: req.GetVersion(), Body: req,
			Conn: &protocol.ConnInfo{ID: 1, Remote: testRemote, Listener: listener}})
		if rep.Err != nil || rep.Response == nil {
			t.Fatalf("%s: %+v", kmsg.NameForKey(req.Key()), rep)
		}
		return rep.Response
	}
	for _, c := range []struct {
		listener, host string
		port           int32
	}{{"INTERNAL", "minikafka", 9092}, {"EXTERNAL", "localhost", 29092}, {"", "minikafka", 9092}, {"OTHER", "minikafka", 9092}} {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 12
		m := ask(c.listener, md).(*kmsg.MetadataResponse)
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.Version, fc.CoordinatorKeys = 4, []string{"g"}
		f := ask(c.listener, fc).(*kmsg.FindCoordinatorResponse)
		dc := kmsg.NewPtrDescribeClusterRequest()
		d := ask(c.listener, dc).(*kmsg.DescribeClusterResponse)
		if m.Brokers[0].Host != c.host || m.Brokers[0].Port != c.port ||
			f.Coordinators[0].Host != c.host || f.Coordinators[0].Port != c.port ||
			d.Brokers[0].Host != c.host || d.Brokers[0].Port != c.port {
			t.Errorf("listener %q: metadata %s:%d, coordinator %s:%d, cluster %s:%d; want %s:%d", c.listener,
				m.Brokers[0].Host, m.Brokers[0].Port, f.Coordinators[0].Host, f.Coordinators[0].Port,
				d.Brokers[0].Host, d.Brokers[0].Port, c.host, c.port)
		}
	}
}

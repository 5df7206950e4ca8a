package minikafka

import (
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/console"
)

// What the console (WithHTTPAddr) reads of the broker directly, beside
// what it asks over its Kafka connection.

// consoleSource is what the console reads of the broker directly.
type consoleSource struct{ b *Broker }

func (s consoleSource) Info() console.Info {
	b := s.b
	info := console.Info{
		NodeID:          b.brk.NodeID(),
		ClusterID:       b.brk.ClusterID(),
		Started:         b.started,
		DataDir:         b.osDataDir,
		ProduceRequests: b.metrics.requests[0].Load(),
		FetchRequests:   b.metrics.requests[1].Load(),
		ProduceBytes:    b.metrics.produceBytes.Load(),
		FetchBytes:      b.metrics.fetchBytes.Load(),
	}
	for _, l := range b.listeners {
		info.Listeners = append(info.Listeners, console.Listener{Name: l.Name, Security: l.Security, Addr: l.Addr.String(), Advertised: l.Advertised})
	}
	for _, srv := range b.srvs {
		info.Connections += srv.Conns()
	}
	for _, n := range b.Nodes() {
		info.Nodes = append(info.Nodes, console.Node{ID: n.ID, Rack: n.Rack, Up: n.Up, Addr: n.Addr})
	}
	return info
}

func (s consoleSource) ForwardStats() []uplink.ForwardStat { return s.b.brk.ForwardStats() }
func (s consoleSource) ForwardGroupOffsets() []uplink.GroupOffsetSync {
	return s.b.brk.ForwardGroupOffsets()
}

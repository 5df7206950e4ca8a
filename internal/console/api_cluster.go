package console

// The cluster page: the brokers, the controller and cluster ID as
// Metadata tells them, the listeners as the broker knows them, and every
// broker config with where its value comes from (DescribeConfigs on the
// BROKER resource). Read only.

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type brokerView struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
	// State is "up", or "stopped" for a node of a simulated cluster
	// that was stopped (Metadata lists only the running ones).
	State string `json:"state"`
}

type clusterView struct {
	ClusterID  string       `json:"cluster_id"`
	Controller int32        `json:"controller"`
	Brokers    []brokerView `json:"brokers"`
	NodeID     int32        `json:"node_id"` // the broker the console runs in
	Listeners  []Listener   `json:"listeners"`
	Configs    []configView `json:"configs"`
}

func (c *Console) cluster(r *http.Request) (any, error) {
	ctx := r.Context()
	info := c.cfg.Broker.Info()
	md, err := c.adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	v := clusterView{ClusterID: md.Cluster, Controller: md.Controller, NodeID: info.NodeID, Listeners: info.Listeners,
		Brokers: []brokerView{}, Configs: []configView{}}
	if v.Listeners == nil {
		v.Listeners = []Listener{}
	}
	for _, b := range md.Brokers {
		bv := brokerView{NodeID: b.NodeID, Host: b.Host, Port: b.Port, State: "up"}
		if b.Rack != nil {
			bv.Rack = *b.Rack
		}
		v.Brokers = append(v.Brokers, bv)
	}
	for _, n := range info.Nodes {
		if n.Up {
			continue
		}
		host, port, _ := strings.Cut(n.Addr, ":")
		p, _ := strconv.Atoi(port)
		v.Brokers = append(v.Brokers, brokerView{NodeID: n.ID, Host: host, Port: int32(p), Rack: n.Rack, State: "stopped"})
	}
	sort.Slice(v.Brokers, func(i, j int) bool { return v.Brokers[i].NodeID < v.Brokers[j].NodeID })
	rcs, err := c.adm.DescribeBrokerConfigs(ctx, info.NodeID)
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return nil, withMessage(rc.Err, rc.ErrMessage)
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

package main

// minikafka cluster status|stop|start|move-leader|move-coordinator|isr|
// placement: the simulated cluster's controls (a broker started with
// -nodes N), through the control API, for tests written in any language.

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/minikafka/minikafka"
)

// clusterControls join the cluster verb's commands (cli_group.go).
var clusterControls = map[string]cliCommand{
	"status":           {"", "the nodes: which are up, which is the controller", clusterStatus},
	"stop":             {"NODE", "stop a node: its listeners refuse, its leaderships and coordinators move", clusterNodeSwitch("stop")},
	"start":            {"NODE", "start a stopped node again; it rejoins the ISRs", clusterNodeSwitch("start")},
	"move-leader":      {"TOPIC PARTITION NODE", "make an in-sync replica the partition's leader (a new leader epoch)", clusterMoveLeader},
	"move-coordinator": {"-group G|-transactional-id T NODE", "move a group's or transactional ID's coordinator", clusterMoveCoordinator},
	"isr":              {"TOPIC PARTITION NODE[,NODE...]", "set a partition's in-sync replicas", clusterISR},
	"placement":        {"TOPIC [PARTITION]", "a partition's replicas, ISR, leader and leader epoch", clusterPlacement},
}

func (c *cliCmd) nodesAnswer(nodes []minikafka.NodeInfo) error {
	rows := make([][]string, len(nodes))
	for i, n := range nodes {
		state := "up"
		if !n.Up {
			state = "stopped"
		}
		ctl := ""
		if n.Controller {
			ctl = "controller"
		}
		rows[i] = []string{strconv.Itoa(int(n.ID)), n.Addr, n.Rack, state, ctl}
	}
	return c.answer(nodes, []string{"NODE", "ADDRESS", "RACK", "STATE", "ROLE"}, rows, nil)
}

func clusterStatus(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		var out struct {
			Nodes []minikafka.NodeInfo `json:"nodes"`
		}
		if err := a.do(ctx, "GET", "/v1/cluster", nil, &out); err != nil {
			return err
		}
		return c.nodesAnswer(out.Nodes)
	}
}

func clusterNodeSwitch(action string) func(c *cliCmd) func(context.Context) error {
	return func(c *cliCmd) func(context.Context) error {
		a := c.adminFlags()
		return func(ctx context.Context) error {
			if err := c.needArgs(1, 1, "a node ID"); err != nil {
				return err
			}
			id, err := strconv.ParseInt(c.args[0], 10, 32)
			if err != nil {
				return fmt.Errorf("node ID %q is not a number", c.args[0])
			}
			var out struct {
				Nodes []minikafka.NodeInfo `json:"nodes"`
			}
			if err := a.do(ctx, "POST", fmt.Sprintf("/v1/cluster/nodes/%d/%s", id, action), nil, &out); err != nil {
				return err
			}
			return c.nodesAnswer(out.Nodes)
		}
	}
}

type cliPlacement struct {
	Topic       string  `json:"topic"`
	Partition   int32   `json:"partition"`
	Replicas    []int32 `json:"replicas"`
	ISR         []int32 `json:"isr"`
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
}

func nodeList(ns []int32) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ",")
}

func (c *cliCmd) placementAnswer(p cliPlacement) error {
	return c.answer(p, []string{"TOPIC", "PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR"},
		[][]string{{p.Topic, strconv.Itoa(int(p.Partition)), strconv.Itoa(int(p.Leader)), strconv.Itoa(int(p.LeaderEpoch)), nodeList(p.Replicas), nodeList(p.ISR)}}, nil)
}

// partitionArgs reads TOPIC PARTITION from the arguments.
func (c *cliCmd) partitionArgs() (string, int32, error) {
	p, err := strconv.ParseInt(c.args[1], 10, 32)
	if err != nil || p < 0 {
		return "", 0, fmt.Errorf("partition %q is not a partition number", c.args[1])
	}
	return c.args[0], int32(p), nil
}

func clusterMoveLeader(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(3, 3, "a topic, a partition and a node ID"); err != nil {
			return err
		}
		topic, part, err := c.partitionArgs()
		if err != nil {
			return err
		}
		node, err := strconv.ParseInt(c.args[2], 10, 32)
		if err != nil {
			return fmt.Errorf("node ID %q is not a number", c.args[2])
		}
		var out cliPlacement
		if err := a.do(ctx, "POST", "/v1/cluster/move-leader", map[string]any{"topic": topic, "partition": part, "node": node}, &out); err != nil {
			return err
		}
		return c.placementAnswer(out)
	}
}

func clusterISR(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(3, 3, "a topic, a partition and the in-sync node IDs (comma-separated)"); err != nil {
			return err
		}
		topic, part, err := c.partitionArgs()
		if err != nil {
			return err
		}
		isr := []int32{}
		for _, s := range strings.Split(c.args[2], ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil {
				return fmt.Errorf("node ID %q is not a number", s)
			}
			isr = append(isr, int32(n))
		}
		var out cliPlacement
		if err := a.do(ctx, "POST", "/v1/cluster/isr", map[string]any{"topic": topic, "partition": part, "isr": isr}, &out); err != nil {
			return err
		}
		return c.placementAnswer(out)
	}
}

func clusterMoveCoordinator(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	group := c.fs.String("group", "", "the consumer or share `group`")
	txnID := c.fs.String("transactional-id", "", "the transactional `ID`")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "a node ID"); err != nil {
			return err
		}
		if (*group == "") == (*txnID == "") {
			return fmt.Errorf("give one of -group or -transactional-id")
		}
		node, err := strconv.ParseInt(c.args[0], 10, 32)
		if err != nil {
			return fmt.Errorf("node ID %q is not a number", c.args[0])
		}
		in := map[string]any{"node": node}
		if *group != "" {
			in["group"] = *group
		} else {
			in["transactional_id"] = *txnID
		}
		var out struct {
			Kind        string `json:"kind"`
			Key         string `json:"key"`
			Coordinator int32  `json:"coordinator"`
		}
		if err := a.do(ctx, "POST", "/v1/cluster/move-coordinator", in, &out); err != nil {
			return err
		}
		return c.answer(out, []string{"KIND", "KEY", "COORDINATOR"}, [][]string{{out.Kind, out.Key, strconv.Itoa(int(out.Coordinator))}}, nil)
	}
}

func clusterPlacement(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 2, "a topic and a partition (default 0)"); err != nil {
			return err
		}
		if len(c.args) == 1 {
			c.args = append(c.args, "0")
		}
		topic, part, err := c.partitionArgs()
		if err != nil {
			return err
		}
		var out cliPlacement
		if err := a.do(ctx, "GET", fmt.Sprintf("/v1/cluster/placement?topic=%s&partition=%d", url.QueryEscape(topic), part), nil, &out); err != nil {
			return err
		}
		return c.placementAnswer(out)
	}
}

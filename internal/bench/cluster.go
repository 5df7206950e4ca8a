package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cluster is issue 35's routing-cost scenario: minikafka with -nodes 3
// and replication factor 3 topics, the same binary as one node (topics
// of replication factor 1) and kfake with three brokers (replication
// factor 3), all three started once and driven alternately by the same
// loads. The target is that three nodes cost no more CPU per GiB than
// one (≤ 3 %): the data is stored once, so only the leader checks and
// the per-node connections differ.
func (r *runner) cluster(ctx context.Context) error {
	r.seq++
	root := filepath.Join(r.cfg.Dir, fmt.Sprintf("s%d", r.seq))
	defer os.RemoveAll(root)
	dir := func(name string) (string, error) {
		d := filepath.Join(root, name)
		return d, os.MkdirAll(d, 0o755)
	}
	var procs []*proc
	defer func() {
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() { defer wg.Done(); p.stop() }()
		}
		wg.Wait()
	}()
	start := func(name string, c Cmd, args ...string) (*proc, error) {
		d, err := dir(name)
		if err != nil {
			return nil, err
		}
		p, err := startProc(ctx, name, c, append(args, "-listen", "127.0.0.1:0", "-data", d, "-durability", "never", "-log-level", "warn"), d)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		return p, nil
	}
	mk3, err := start("mk3", r.cfg.Minikafka, "-nodes", "3")
	if err != nil {
		return fmt.Errorf("minikafka -nodes 3 (a binary without -nodes: pass -minikafka with cmd/mkprof): %w", err)
	}
	mk1, err := start("mk1", r.cfg.Minikafka)
	if err != nil {
		return err
	}
	kd, err := dir("kfake3")
	if err != nil {
		return err
	}
	kf3, err := startProc(ctx, "kfake3", r.cfg.Kfake, []string{"-brokers", "3"}, kd)
	if err != nil {
		return err
	}
	procs = append(procs, kf3)
	r.others = []*proc{mk1}
	defer func() { r.others = nil }()
	rf := func(p *proc) int16 {
		if p == mk1 {
			return 1
		}
		return 3
	}

	for _, c := range []struct {
		name, desc string
		spec       produceSpec
	}{
		{"p1k", "produce 1 KiB, 8 partitions, 2 producers", produceSpec{recSize: 1024, parts: 8, producers: 2}},
		{"p100", "produce 100 B, 1 partition, 1 producer", produceSpec{recSize: 100, parts: 1, producers: 1}},
	} {
		c.spec.bytes, c.spec.codec = r.cfg.ProduceBytes, kgo.NoCompression()
		mks, kfs, err := r.alternate(mk3, kf3, func(p *proc, topic string) (sample, error) {
			spec := c.spec
			spec.rf = rf(p)
			s, err := runProduce(ctx, p, c.name+"-"+topic, spec)
			if err == nil {
				// The three stay up for every run: kfake keeps what it
				// is sent in memory (tens of GiB over a run otherwise).
				err = deleteTopic(ctx, p.addr, c.name+"-"+topic)
			}
			return s, err
		})
		if err != nil {
			return err
		}
		r.addCluster(c.desc+", acks=all, durability never", mks, kfs)
	}

	const size = 1024
	n := r.cfg.ConsumeBytes / size
	for _, p := range []*proc{mk3, mk1, kf3} {
		fmt.Fprintf(r.cfg.Log, "   %-9s filling %d MiB of 1 KiB records\n", p.name, r.cfg.ConsumeBytes>>20)
		spec := produceSpec{recSize: size, parts: 1, producers: 1, bytes: n * size, codec: kgo.NoCompression(), rf: rf(p)}
		if _, err := runProduce(ctx, p, "data", spec); err != nil {
			return fmt.Errorf("%s fill: %w", p.name, err)
		}
	}
	mks, kfs, err := r.alternate(mk3, kf3, func(p *proc, _ string) (sample, error) {
		return runConsume(ctx, p, "data", n, n*size)
	})
	if err != nil {
		return err
	}
	r.addCluster(fmt.Sprintf("consume %d MiB of 1 KiB records from offset 0, 1 partition, one consumer", r.cfg.ConsumeBytes>>20), mks, kfs)
	return nil
}

// addCluster adds the rows of one cluster measurement: 3 nodes against
// kfake's 3 brokers (with 1 node in Others), then 3 nodes against 1.
func (r *runner) addCluster(desc string, mk3, kf3 []sample) {
	mk1 := r.otherRuns[0]
	r.addThroughput("cluster", desc+"; minikafka 3 nodes RF 3, kfake 3 brokers RF 3, other: minikafka 1 node", mk3, kf3, "")
	// Each round ran both minikafkas back to back: the pairwise ratios
	// cancel some of the machine's drift.
	var rate, cpu []float64
	for i := range min(len(mk3), len(mk1)) {
		rate = append(rate, mk3[i].mibps()/mk1[i].mibps())
		if mk1[i].cpu > 0 { // a tiny run can take less than a clock tick
			cpu = append(cpu, mk3[i].cpuPerGiB()/mk1[i].cpuPerGiB())
		}
	}
	cpuRatio := "–"
	if len(cpu) > 0 {
		slices.Sort(cpu)
		// Pooled: all runs' CPU over all their bytes, finer than any one
		// run's 10 ms CPU ticks.
		var c3, b3, c1, b1 float64
		for _, s := range mk3 {
			c3, b3 = c3+s.cpu, b3+float64(s.bytes)
		}
		for _, s := range mk1 {
			c1, b1 = c1+s.cpu, b1+float64(s.bytes)
		}
		cpuRatio = fmt.Sprintf("%.3f× (%.2f–%.2f; pooled %.3f×)", median(cpu), cpu[0], cpu[len(cpu)-1], (c3/b3)/(c1/b1))
	}
	r.rows = append(r.rows, Row{Scenario: "cluster", Metric: desc + "; minikafka 3 nodes / 1 node, same runs: MiB/s ratio, CPU-s/GiB ratio (pairwise medians; CPU range; pooled over all runs)",
		Minikafka: fmt.Sprintf("%.3f×, CPU %s", median(rate), cpuRatio),
		MkCPU:     fmt.Sprintf("%.2f", median(cpus(mk3))), KfCPU: fmt.Sprintf("%.2f (1 node)", median(cpus(mk1))),
		Target: "CPU-s/GiB 3 nodes ≤ 1.03 × 1 node"})
}

func deleteTopic(ctx context.Context, addr, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).DeleteTopic(ctx, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

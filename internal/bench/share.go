package bench

// The share-group scenario (KIP-932): three share consumers read 1 KiB
// records from eight partitions, accepting each (kgo's implicit accept on
// the next poll), against kfake in the same run, and three classic group
// consumers on minikafka over the same data: the cost of per-record state.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (r *runner) share(ctx context.Context) error {
	mk, kf, cleanup, err := r.pair(ctx, false)
	if err != nil {
		return err
	}
	defer cleanup()
	const size, parts, consumers = 1024, 8, 3
	total := min(r.cfg.ConsumeBytes, 128<<20)
	n := total / size
	for _, p := range append([]*proc{mk, kf}, r.others...) {
		fmt.Fprintf(r.cfg.Log, "   %-9s filling %d MiB of 1 KiB records over %d partitions\n", p.name, total>>20, parts)
		if _, err := runProduce(ctx, p, "share", produceSpec{recSize: size, parts: parts, producers: 2, bytes: total, codec: kgo.NoCompression()}); err != nil {
			return fmt.Errorf("%s fill: %w", p.name, err)
		}
	}
	run := 0
	mks, kfs, err := r.alternate(mk, kf, func(p *proc, _ string) (sample, error) {
		run++
		return runGroupConsume(ctx, p, fmt.Sprintf("share-%d", run), true, consumers, n)
	})
	if err != nil {
		return err
	}
	r.addThroughput("share", fmt.Sprintf("share group, 3 consumers, 8 partitions, %d MiB of 1 KiB records, accept each", total>>20), mks, kfs, "")
	if r.cfg.LibrdkafkaShare != "" {
		// kfake answers a partition with nothing to deliver with null
		// records, which makes librdkafka drop the whole ShareFetch
		// response (issue 39): its runs may only finish through
		// acquisition-lock expiry, or not at all. A failed kfake run is
		// reported in the row, not a reason to stop.
		var mkr, kfr []sample
		var kfErr error
		for i := 0; i < r.cfg.Runs; i++ {
			run++
			s, err := runRdShare(ctx, r.cfg.LibrdkafkaShare, mk, fmt.Sprintf("rdshare-%d", run), consumers, n, 10*time.Minute)
			if err != nil {
				return fmt.Errorf("minikafka rdshare run %d: %w", i+1, err)
			}
			fmt.Fprintf(r.cfg.Log, "   minikafka rdshare run %d: %7.1f MiB/s %9.0f rec/s %6.2f CPU-s/GiB\n", i+1, s.mibps(), s.recps(), s.cpuPerGiB())
			mkr = append(mkr, s)
			if kfErr != nil {
				continue
			}
			run++
			s, err = runRdShare(ctx, r.cfg.LibrdkafkaShare, kf, fmt.Sprintf("rdshare-%d", run), consumers, n, 3*time.Minute)
			if err != nil {
				kfErr = err
				fmt.Fprintf(r.cfg.Log, "   kfake     rdshare run %d failed: %.200v\n", i+1, err)
				continue
			}
			fmt.Fprintf(r.cfg.Log, "   kfake     rdshare run %d: %7.1f MiB/s %9.0f rec/s %6.2f CPU-s/GiB\n", i+1, s.mibps(), s.recps(), s.cpuPerGiB())
			kfr = append(kfr, s)
		}
		desc := fmt.Sprintf("the same with librdkafka 2.15.1's share consumer (cmd/rdshare), %d consumers, implicit accept", consumers)
		if kfErr == nil {
			r.addThroughput("share", desc, mkr, kfr, "")
		} else {
			mm := median(mibs(mkr))
			r.rows = append(r.rows, Row{Scenario: "share", Metric: desc + " — MiB/s (rec/s)",
				Minikafka: fmt.Sprintf("%s (%s)", mibps(mm), krec(median(recs(mkr)))),
				Kfake:     fmt.Sprintf("did not finish in 3 min (%d of %d runs done)", len(kfr), r.cfg.Runs),
				MkCPU:     fmt.Sprintf("%.2f", median(cpus(mkr)))})
		}
	}
	var classic []sample
	for i := 0; i < r.cfg.Runs; i++ {
		s, err := runGroupConsume(ctx, mk, fmt.Sprintf("classic-%d", i), false, consumers, n)
		if err != nil {
			return fmt.Errorf("classic run %d: %w", i+1, err)
		}
		fmt.Fprintf(r.cfg.Log, "   classic   run %d: %7.1f MiB/s %9.0f rec/s %6.2f CPU-s/GiB\n", i+1, s.mibps(), s.recps(), s.cpuPerGiB())
		classic = append(classic, s)
	}
	sm, cm := median(mibs(mks)), median(mibs(classic))
	r.rows = append(r.rows, Row{Scenario: "share", Metric: "minikafka: the same read by a classic group (3 consumers) — MiB/s (rec/s); Ratio = share/classic",
		Minikafka: fmt.Sprintf("%s (%s)", mibps(cm), krec(median(recs(classic)))), Ratio: ratio(sm, cm),
		MkCPU: fmt.Sprintf("%.2f", median(cpus(classic)))})
	return nil
}

// runRdShare reads n records of topic "share" with k librdkafka share
// consumers of a new share group (cmd/rdshare, its own process), timed by
// that process from the consumers' creation.
func runRdShare(ctx context.Context, bin string, p *proc, group string, k int, n int64, limit time.Duration) (sample, error) {
	if err := setShareReset(ctx, p.addr, group); err != nil {
		return sample{}, err
	}
	cpu0, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := exec.CommandContext(cctx, bin, p.addr, "share", group, strconv.FormatInt(n, 10), strconv.Itoa(k)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return sample{}, fmt.Errorf("rdshare: %w: %s", err, ee.Stderr)
		}
		return sample{}, fmt.Errorf("rdshare: %w", err)
	}
	cpu1, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	var s sample
	if _, err := fmt.Sscan(string(out), &s.records, &s.bytes, &s.secs); err != nil {
		return sample{}, fmt.Errorf("rdshare printed %q: %w", out, err)
	}
	s.cpu = (cpu1 - cpu0).Seconds()
	return s, nil
}

// runGroupConsume reads n records of topic "share" with k consumers of a
// new group (a share group when share, else a classic one from the
// start) and times it from the consumers' creation.
func runGroupConsume(ctx context.Context, p *proc, group string, share bool, k int, n int64) (sample, error) {
	if share {
		if err := setShareReset(ctx, p.addr, group); err != nil {
			return sample{}, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cpu0, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	var got, gotBytes atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for range k {
		opts := []kgo.Opt{kgo.SeedBrokers(p.addr), kgo.ConsumeTopics("share"), kgo.FetchMaxBytes(50 << 20)}
		if share {
			opts = append(opts, kgo.ShareGroup(group))
		} else {
			opts = append(opts, kgo.ConsumerGroup(group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return sample{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for got.Load() < n && cctx.Err() == nil {
				pctx, pcancel := context.WithTimeout(cctx, 200*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				for _, e := range fs.Errors() {
					if e.Err != context.DeadlineExceeded && e.Err != context.Canceled {
						errs <- e.Err
						return
					}
				}
				fs.EachRecord(func(r *kgo.Record) { got.Add(1); gotBytes.Add(int64(len(r.Value))) })
			}
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	select {
	case err := <-errs:
		return sample{}, err
	default:
	}
	if got.Load() < n {
		return sample{}, fmt.Errorf("consumed %d of %d records: %w", got.Load(), n, cctx.Err())
	}
	cpu1, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	return sample{secs: secs, bytes: gotBytes.Load(), records: got.Load(), cpu: (cpu1 - cpu0).Seconds()}, nil
}

// setShareReset makes a new share group start at the log start
// (share.auto.offset.reset=earliest), as the data is produced before it.
func setShareReset(ctx context.Context, addr, group string) error {
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer admin.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, admin)
	if err == nil {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("share.auto.offset.reset: %w", err)
	}
	return nil
}

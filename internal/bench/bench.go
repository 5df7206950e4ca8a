package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Config selects the brokers, scenarios and sizes of a run.
type Config struct {
	Minikafka Cmd // the minikafka binary (flags -listen -data -durability -log-level are appended)
	Kfake     Cmd // kfakebroker (flags -data-dir -sync are appended)
	// Others are more minikafka binaries (older builds) run in the same
	// produce and latency runs, alternating with the two above, so a
	// change is measured against its base under the same load.
	Others []NamedCmd
	// Kafka, when set, is Apache Kafka (scripts/kafka-broker.sh) run in the
	// produce-*, latency and consume runs too, after KafkaWarmup bytes
	// produced once per start (kafka.go).
	Kafka       Cmd
	KafkaWarmup int64

	// PauseIdle stops (SIGSTOP) every other broker process while one is
	// measured and continues it afterwards: on 2 cores an idle JVM's
	// background threads (GC, KRaft heartbeats, the log cleaner) otherwise
	// take CPU and cache from the broker being timed, which inflated
	// minikafka's and kfake's CPU-s/GiB by up to 1.7x in runs with Kafka.
	PauseIdle bool

	// DeleteTopics deletes each produce and compression run's topic once
	// the run is measured. kfake keeps every record it is sent in memory,
	// so without it kfake's heap grows run by run (the peer at its worst);
	// with it every run starts from the same state (the peer at its best).
	DeleteTopics bool

	// LibrdkafkaShare, when set, is cmd/rdshare (librdkafka's share
	// consumer): the share scenario also runs it against minikafka and
	// kfake, alternating.
	LibrdkafkaShare string

	Scenarios []string // names from AllScenarios, or "all"
	// Codecs limits the compression scenario to these codecs (none, lz4,
	// zstd, gzip, snappy); empty runs all five.
	Codecs       []string
	Runs         int   // runs per broker per scenario (medians over these)
	ProduceBytes int64 // payload per produce run
	ConsumeBytes int64 // data produced once, then read per consume run; also the RSS and reopen size
	LatencyRate  int   // records/s in the latency runs
	LatencyFor   time.Duration
	Dir          string    // parent of the brokers' fresh data directories
	Log          io.Writer // progress lines; nil for none
}

// NamedCmd is a minikafka binary with the label its figures get.
type NamedCmd struct {
	Name string
	Cmd  Cmd
}

// AllScenarios in the order they run.
var AllScenarios = []string{"produce-100b", "produce-1k", "produce-1k-1000p", "produce-16k", "always", "compression", "consume", "latency", "share", "cluster"}

// Row is one line of the result table.
type Row struct {
	Scenario, Metric string
	Minikafka, Kfake string
	Ratio            string // minikafka / kfake of the medians
	MkCPU, KfCPU     string // broker CPU-s/GiB, medians
	Target           string // the goal for minikafka
	Load             string // load average when the scenario started
	Others           string // Config.Others' figures in the same runs
}

type runner struct {
	cfg     Config
	rows    []Row
	seq     int
	mkStart []float64 // fresh-dir start-up times, ms
	kfStart []float64
	// others are Config.Others' processes of the current pair, when the
	// scenario runs them (withOthers); otherRuns their samples from the
	// last alternate, by index.
	withOthers bool
	withKafka  bool // the scenario runs Config.Kafka too
	others     []*proc
	otherRuns  [][]sample
}

// Run runs the configured scenarios and returns the table rows.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	if cfg.Runs < 1 {
		cfg.Runs = 1
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	want := map[string]bool{}
	for _, s := range cfg.Scenarios {
		if s == "all" {
			for _, a := range AllScenarios {
				want[a] = true
			}
			continue
		}
		known := false
		for _, a := range AllScenarios {
			known = known || a == s
		}
		if !known {
			return nil, fmt.Errorf("unknown scenario %q (have %s, all)", s, strings.Join(AllScenarios, ", "))
		}
		want[s] = true
	}
	r := &runner{cfg: cfg}
	for _, s := range AllScenarios {
		if !want[s] {
			continue
		}
		load := LoadAvg()
		first := len(r.rows)
		fmt.Fprintf(cfg.Log, "== %s (load average %s)\n", s, load)
		r.withOthers = strings.HasPrefix(s, "produce-") || s == "latency" || s == "compression"
		r.withKafka = r.cfg.Kafka.Path != "" && (r.withOthers || s == "consume" || s == "share")
		t0 := time.Now()
		var err error
		switch s {
		case "produce-100b":
			err = r.produce(ctx, s, "100 B, 1 partition, 1 producer, acks=all, durability never", produceSpec{recSize: 100, parts: 1, producers: 1}, false, "≥ 1.3× kfake; ≤ 6 CPU-s/GiB")
		case "produce-1k":
			err = r.produce(ctx, s, "1 KiB, 8 partitions, 2 producers, acks=all, durability never", produceSpec{recSize: 1024, parts: 8, producers: 2}, false, "≥ 1.5× kfake; ≤ 1.2 CPU-s/GiB")
		case "produce-1k-1000p":
			err = r.produce(ctx, s, "1 KiB, 1000 partitions, 2 producers, acks=all, durability never", produceSpec{recSize: 1024, parts: 1000, producers: 2}, false, "CPU-s/GiB ≤ 1.2× produce-1k's; ahead of kfake in rate and CPU")
		case "produce-16k":
			err = r.produce(ctx, s, "16 KiB, 1 partition, 1 producer, acks=all, durability never", produceSpec{recSize: 16 << 10, parts: 1, producers: 1}, false, "≥ 400 MiB/s")
		case "always":
			err = r.produce(ctx, s, "1 KiB, 8 partitions, 2 producers, durability always (kfake -sync)", produceSpec{recSize: 1024, parts: 8, producers: 2}, true, "≥ 215 MiB/s, ≥ ½ disk fsync bandwidth")
		case "compression":
			err = r.compression(ctx)
		case "consume":
			err = r.consume(ctx)
		case "latency":
			err = r.latency(ctx)
		case "share":
			err = r.share(ctx) // share.go
		case "cluster":
			err = r.cluster(ctx) // cluster.go
		}
		for i := first; i < len(r.rows); i++ {
			r.rows[i].Load = load
		}
		if err != nil {
			return r.rows, fmt.Errorf("%s: %w", s, err)
		}
		src, _ := cpuSource.Load().(string)
		fmt.Fprintf(cfg.Log, "   (%s took %s; broker CPU from %s)\n", s, time.Since(t0).Round(time.Millisecond), src)
	}
	if len(r.mkStart) > 0 {
		r.rows = append(r.rows, Row{Scenario: "start-up", Metric: fmt.Sprintf("fork → first Metadata, empty dir (median of %d/%d)", len(r.mkStart), len(r.kfStart)),
			Minikafka: ms(median(r.mkStart)), Kfake: ms(median(r.kfStart)), Ratio: ratio(median(r.mkStart), median(r.kfStart)), Target: "< 30 ms"})
	}
	return r.rows, nil
}

// pair starts minikafka and kfake with fresh data directories; always
// selects durability always for minikafka and -sync for kfake.
func (r *runner) pair(ctx context.Context, always bool) (mk, kf *proc, cleanup func(), err error) {
	r.seq++
	root := filepath.Join(r.cfg.Dir, fmt.Sprintf("s%d", r.seq))
	mkDir, kfDir := filepath.Join(root, "minikafka"), filepath.Join(root, "kfake")
	for _, d := range []string{mkDir, kfDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, nil, err
		}
	}
	mk, err = r.startMk(ctx, mkDir, always)
	if err != nil {
		return nil, nil, nil, err
	}
	r.others = nil
	if r.withOthers {
		for i, o := range r.cfg.Others {
			d := filepath.Join(root, fmt.Sprintf("other%d", i))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, nil, nil, err
			}
			p, err := r.startCmd(ctx, o.Name, o.Cmd, d, always)
			if err != nil {
				mk.stop()
				for _, q := range r.others {
					q.stop()
				}
				return nil, nil, nil, err
			}
			r.others = append(r.others, p)
		}
	}
	if r.withKafka {
		p, err := r.startKafka(ctx, root, always)
		if err != nil {
			mk.stop()
			for _, q := range r.others {
				q.stop()
			}
			return nil, nil, nil, err
		}
		r.others = append(r.others, p)
	}
	r.mkStart = append(r.mkStart, msf(mk.startup))
	var kargs []string
	if always {
		kargs = []string{"-data-dir", kfDir, "-sync"}
	}
	kf, err = startProc(ctx, "kfake", r.cfg.Kfake, kargs, kfDir)
	if err != nil {
		mk.stop()
		for _, q := range r.others {
			q.stop()
		}
		return nil, nil, nil, err
	}
	others := r.others
	r.kfStart = append(r.kfStart, msf(kf.startup))
	return mk, kf, func() {
		// Both at once: each takes about a second to exit after SIGTERM.
		var wg sync.WaitGroup
		for _, p := range append([]*proc{mk}, others...) {
			wg.Add(1)
			go func() { defer wg.Done(); p.stop() }()
		}
		kf.stop()
		wg.Wait()
		os.RemoveAll(root)
	}, nil
}

func (r *runner) startMk(ctx context.Context, dir string, always bool) (*proc, error) {
	return r.startCmd(ctx, "minikafka", r.cfg.Minikafka, dir, always)
}

func (r *runner) startCmd(ctx context.Context, name string, c Cmd, dir string, always bool) (*proc, error) {
	d := "never"
	if always {
		d = "always"
	}
	return startProc(ctx, name, c, []string{"-listen", "127.0.0.1:0", "-data", dir, "-durability", d, "-log-level", "warn"}, dir)
}

// alternate runs fn Runs times on each broker, swapping which goes first
// every round; each call gets a new topic name.
func (r *runner) alternate(mk, kf *proc, fn func(p *proc, topic string) (sample, error)) (mks, kfs []sample, err error) {
	all := append([]*proc{mk, kf}, r.others...)
	r.otherRuns = make([][]sample, len(r.others))
	for i := 0; i < r.cfg.Runs; i++ {
		// Each round starts with the next broker: every one goes first
		// (and last) equally often.
		order := append(append([]*proc(nil), all[i%len(all):]...), all[:i%len(all)]...)
		for _, p := range order {
			resume := r.pauseOthers(all, p)
			s, err := fn(p, fmt.Sprintf("t%d-%s", i, p.name))
			resume()
			if err != nil {
				select {
				case <-p.done: // it died: say how
					return nil, nil, fmt.Errorf("%s run %d: %w (the broker exited: %s)", p.name, i+1, err, p.stderr)
				default:
				}
				return nil, nil, fmt.Errorf("%s run %d: %w", p.name, i+1, err)
			}
			fmt.Fprintf(r.cfg.Log, "   %-9s run %d: %7.1f MiB/s %9.0f rec/s %6.2f CPU-s/GiB", p.name, i+1, s.mibps(), s.recps(), s.cpuPerGiB())
			if s.p50 > 0 {
				fmt.Fprintf(r.cfg.Log, "  p50 %.2f p99 %.2f p999 %.2f ms", s.p50, s.p99, s.p999)
			}
			fmt.Fprintln(r.cfg.Log)
			switch p {
			case mk:
				mks = append(mks, s)
			case kf:
				kfs = append(kfs, s)
			default:
				for j, q := range r.others {
					if q == p {
						r.otherRuns[j] = append(r.otherRuns[j], s)
					}
				}
			}
		}
	}
	return mks, kfs, nil
}

// pauseOthers stops every process of all but p when Config.PauseIdle is
// set, and returns what continues them.
func (r *runner) pauseOthers(all []*proc, p *proc) (resume func()) {
	if !r.cfg.PauseIdle {
		return func() {}
	}
	var stopped []*proc
	for _, q := range all {
		if q != p && q.cmd.Process.Signal(syscall.SIGSTOP) == nil {
			stopped = append(stopped, q)
		}
	}
	return func() {
		for _, q := range stopped {
			_ = q.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
}

func (r *runner) produce(ctx context.Context, name, desc string, spec produceSpec, always bool, target string) error {
	spec.bytes = r.cfg.ProduceBytes
	spec.codec = kgo.NoCompression()
	spec.deleteAfter = r.cfg.DeleteTopics
	mk, kf, cleanup, err := r.pair(ctx, always)
	if err != nil {
		return err
	}
	defer cleanup()
	var disk []float64
	mks, kfs, err := r.alternate(mk, kf, func(p *proc, topic string) (sample, error) {
		if always && p == mk {
			// The disk's own fsync'd sequential bandwidth, next to each
			// minikafka run, in the same directory tree.
			bw, err := diskFsyncMiBps(filepath.Dir(mk.dataDir), min(r.cfg.ProduceBytes, 256<<20))
			if err != nil {
				return sample{}, err
			}
			fmt.Fprintf(r.cfg.Log, "   disk      write+fdatasync 1 MiB chunks: %.1f MiB/s\n", bw)
			disk = append(disk, bw)
		}
		return runProduce(ctx, p, topic, spec)
	})
	if err != nil {
		return err
	}
	r.addThroughput(name, desc, mks, kfs, target)
	if always {
		r.rows = append(r.rows, Row{Scenario: name, Metric: "disk write+fdatasync, 1 MiB chunks (same run)", Minikafka: mibps(median(disk)),
			Ratio: fmt.Sprintf("minikafka/disk %.2f", median(mibs(mks))/median(disk)), Target: "minikafka ≥ 0.5 × disk"})
	}
	return nil
}

func (r *runner) addThroughput(name, desc string, mks, kfs []sample, target string) {
	mm, km := median(mibs(mks)), median(mibs(kfs))
	var others []string
	for j, ss := range r.otherRuns {
		others = append(others, fmt.Sprintf("%s: %s, %.2f CPU-s/GiB", r.others[j].name, mibps(median(mibs(ss))), median(cpus(ss))))
	}
	r.rows = append(r.rows, Row{Scenario: name, Metric: desc + " — MiB/s (rec/s)", Others: strings.Join(others, "; "),
		Minikafka: fmt.Sprintf("%s (%s)", mibps(mm), krec(median(recs(mks)))),
		Kfake:     fmt.Sprintf("%s (%s)", mibps(km), krec(median(recs(kfs)))),
		Ratio:     ratio(mm, km),
		MkCPU:     fmt.Sprintf("%.2f", median(cpus(mks))), KfCPU: fmt.Sprintf("%.2f", median(cpus(kfs))),
		Target: target})
}

// compression measures the "compression passes through" target:
// the 1 KiB, 8 partitions, 2 producers scenario under durability always
// (kfake -sync), once per codec on the same pair of brokers; the broker
// CPU-s/GiB of each codec minus that of none is what compression costs the
// broker (≤ 0.1 is the target). minikafka validates compressed batches
// by default; pass -validate-compressed-records=false with mkbench
// -minikafka-arg to measure the passthrough opt-out.
func (r *runner) compression(ctx context.Context) error {
	mk, kf, cleanup, err := r.pair(ctx, true)
	if err != nil {
		return err
	}
	defer cleanup()
	var baseMk, baseKf float64
	haveBase := false
	for _, c := range []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()},
		{"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()}} {
		if len(r.cfg.Codecs) > 0 && !slices.Contains(r.cfg.Codecs, c.name) {
			continue
		}
		fmt.Fprintf(r.cfg.Log, "  codec %s\n", c.name)
		spec := produceSpec{recSize: 1024, parts: 8, producers: 2, bytes: r.cfg.ProduceBytes, codec: c.codec, compressible: true, deleteAfter: r.cfg.DeleteTopics}
		mks, kfs, err := r.alternate(mk, kf, func(p *proc, topic string) (sample, error) {
			return runProduce(ctx, p, c.name+"-"+topic, spec)
		})
		if err != nil {
			return err
		}
		target := ""
		if c.name == "none" {
			baseMk, baseKf, haveBase = median(cpus(mks)), median(cpus(kfs)), true
		} else if haveBase {
			target = fmt.Sprintf("extra ≤ 0.1 CPU-s/GiB; extra here: minikafka %+.2f, kfake %+.2f", median(cpus(mks))-baseMk, median(cpus(kfs))-baseKf)
		}
		r.addThroughput("compression", fmt.Sprintf("%s, compressible 1 KiB values, 8 partitions, 2 producers, durability always; per GiB uncompressed", c.name), mks, kfs, target)
	}
	return nil
}

func (r *runner) consume(ctx context.Context) error {
	mk, kf, cleanup, err := r.pair(ctx, false)
	if err != nil {
		return err
	}
	defer cleanup()
	const size = 1024
	n := r.cfg.ConsumeBytes / size
	sizeDesc := fmt.Sprintf("%d MiB", r.cfg.ConsumeBytes>>20)
	idleMk, err1 := mk.rss()
	idleKf, err2 := kf.rss()
	if err1 != nil || err2 != nil {
		return fmt.Errorf("rss: %v %v", err1, err2)
	}
	r.rows = append(r.rows, Row{Scenario: "rss", Metric: "idle RSS after start", Minikafka: mib(idleMk), Kfake: mib(idleKf), Ratio: ratio(float64(idleMk), float64(idleKf)), Target: "≤ 20 MiB", Others: r.othersRSS()})
	for _, p := range append([]*proc{mk, kf}, r.others...) {
		fmt.Fprintf(r.cfg.Log, "   %-9s filling %s of 1 KiB records\n", p.name, sizeDesc)
		if err := fill(ctx, p, "data", n, size); err != nil {
			return fmt.Errorf("%s fill: %w", p.name, err)
		}
	}
	rssMk, err1 := mk.rss()
	rssKf, err2 := kf.rss()
	if err1 != nil || err2 != nil {
		return fmt.Errorf("rss: %v %v", err1, err2)
	}
	r.rows = append(r.rows, Row{Scenario: "rss", Metric: "RSS after " + sizeDesc + " produced", Minikafka: mib(rssMk), Kfake: mib(rssKf), Ratio: ratio(float64(rssMk), float64(rssKf)), Target: "≤ 150 MiB (after 1 GiB)", Others: r.othersRSS()})
	mks, kfs, err := r.alternate(mk, kf, func(p *proc, _ string) (sample, error) {
		return runConsume(ctx, p, "data", n, n*size)
	})
	if err != nil {
		return err
	}
	r.addThroughput("consume", "read "+sizeDesc+" of 1 KiB records from offset 0, one consumer", mks, kfs, "≥ 500 MiB/s; ≤ 0.3 CPU-s/GiB")

	// Reopen: a clean stop, then fresh processes on the same directory.
	if err := mk.stop(); err != nil {
		return err
	}
	var reopen []float64
	for i := 0; i < r.cfg.Runs; i++ {
		p, err := r.startMk(ctx, mk.dataDir, false)
		if err != nil {
			return fmt.Errorf("reopen: %w", err)
		}
		reopen = append(reopen, msf(p.startup))
		fmt.Fprintf(r.cfg.Log, "   minikafka reopen %d: %.1f ms\n", i+1, msf(p.startup))
		if err := p.stop(); err != nil {
			return err
		}
	}
	r.rows = append(r.rows, Row{Scenario: "reopen", Metric: "fork → first Metadata on a dir holding " + sizeDesc, Minikafka: ms(median(reopen)), Kfake: "n/a (in memory)", Target: "≤ 500 ms (1 GiB)"})
	return nil
}

func (r *runner) latency(ctx context.Context) error {
	for _, always := range []bool{false, true} {
		mode, target := "never", "p99 ≤ 10 ms, p999 ≤ 25 ms"
		if always {
			mode, target = "always (kfake -sync)", "p99 ≤ 15 ms"
		}
		fmt.Fprintf(r.cfg.Log, "  durability %s\n", mode)
		mk, kf, cleanup, err := r.pair(ctx, always)
		if err != nil {
			return err
		}
		mks, kfs, err := r.alternate(mk, kf, func(p *proc, topic string) (sample, error) {
			return runLatency(ctx, p, topic, r.cfg.LatencyRate, 1024, r.cfg.LatencyFor)
		})
		names := make([]string, len(r.others))
		for j, p := range r.others {
			names[j] = p.name
		}
		cleanup()
		if err != nil {
			return err
		}
		lat := func(ss []sample) string {
			var a, b, c []float64
			for _, s := range ss {
				a, b, c = append(a, s.p50), append(b, s.p99), append(c, s.p999)
			}
			return fmt.Sprintf("%.2f / %.2f / %.2f", median(a), median(b), median(c))
		}
		p99 := func(ss []sample) float64 {
			var b []float64
			for _, s := range ss {
				b = append(b, s.p99)
			}
			return median(b)
		}
		if always {
			// What one fsync costs on this disk right now: the floor
			// under every acks=all answer with durability always.
			lat, err := diskFsyncLatency(r.cfg.Dir, 500, 4<<10)
			if err != nil {
				return err
			}
			r.rows = append(r.rows, Row{Scenario: "latency", Metric: "disk: write 4 KiB + fdatasync, p50 / p99 / p999 ms of 500 (same run)",
				Minikafka: fmt.Sprintf("%.2f / %.2f / %.2f", pct(lat, 0.5), pct(lat, 0.99), pct(lat, 0.999))})
		}
		var others []string
		for j, ss := range r.otherRuns {
			others = append(others, fmt.Sprintf("%s: %s, %.2f CPU-s/GiB", names[j], lat(ss), median(cpus(ss))))
		}
		r.rows = append(r.rows, Row{Scenario: "latency", Others: strings.Join(others, "; "),
			Metric:    fmt.Sprintf("end-to-end p50 / p99 / p999 ms, %d rec/s of 1 KiB for %s, durability %s", r.cfg.LatencyRate, r.cfg.LatencyFor, mode),
			Minikafka: lat(mks), Kfake: lat(kfs), Ratio: "p99 " + ratio(p99(mks), p99(kfs)),
			MkCPU: fmt.Sprintf("%.2f", median(cpus(mks))), KfCPU: fmt.Sprintf("%.2f", median(cpus(kfs))), Target: target})
	}
	return nil
}

// diskFsyncMiBps writes total bytes in 1 MiB chunks to a new file in dir,
// fdatasync after each, and returns the rate.
func diskFsyncMiBps(dir string, total int64) (float64, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	chunk := payload(1<<20, false, 3)
	t0 := time.Now()
	var n int64
	for ; n < total; n += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			return 0, err
		}
		if err := datasync(f); err != nil {
			return 0, err
		}
	}
	return float64(n) / (1 << 20) / time.Since(t0).Seconds(), nil
}

// diskFsyncLatency appends n writes of size bytes to a new file in dir,
// each followed by fdatasync, and returns their latencies in ms, sorted.
func diskFsyncLatency(dir string, n, size int) ([]float64, error) {
	f, err := os.CreateTemp(dir, "fsync-latency-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := payload(size, false, 5)
	lat := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, err
		}
		if err := datasync(f); err != nil {
			return nil, err
		}
		lat = append(lat, msf(time.Since(t0)))
	}
	slices.Sort(lat)
	return lat, nil
}

// LoadAvg is /proc/loadavg's three load averages.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Table renders rows as a markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	others := false
	for _, r := range rows {
		others = others || r.Others != ""
	}
	if others {
		b.WriteString("| scenario (load avg at its start) | metric | minikafka | kfake | ratio mk/kfake | broker CPU-s/GiB mk / kfake | other brokers (older builds, Apache Kafka), same runs | issue target (minikafka) |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| scenario (load avg at its start) | metric | minikafka | kfake | ratio mk/kfake | broker CPU-s/GiB mk / kfake | issue target (minikafka) |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
	}
	for _, r := range rows {
		cpu := ""
		if r.MkCPU != "" {
			cpu = r.MkCPU + " / " + r.KfCPU
		}
		sc := r.Scenario
		if r.Load != "" {
			sc += " (" + strings.Fields(r.Load)[0] + ")"
		}
		if others {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", sc, r.Metric, r.Minikafka, r.Kfake, r.Ratio, cpu, r.Others, r.Target)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", sc, r.Metric, r.Minikafka, r.Kfake, r.Ratio, cpu, r.Target)
	}
	return b.String()
}

func mibs(ss []sample) (out []float64) {
	for _, s := range ss {
		out = append(out, s.mibps())
	}
	return out
}

func recs(ss []sample) (out []float64) {
	for _, s := range ss {
		out = append(out, s.recps())
	}
	return out
}

func cpus(ss []sample) (out []float64) {
	for _, s := range ss {
		out = append(out, s.cpuPerGiB())
	}
	return out
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }
func ms(x float64) string         { return fmt.Sprintf("%.1f ms", x) }
func mibps(x float64) string      { return fmt.Sprintf("%.1f MiB/s", x) }
func mib(n int64) string          { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func krec(x float64) string       { return fmt.Sprintf("%.0f K rec/s", x/1000) }

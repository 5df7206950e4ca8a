package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/logstore"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr, nil))
}

type settings struct {
	listen, advertise, data string
	durability              string
	inMemory                bool
	nodeID                  int
	partitions              int
	autoCreate              bool
	logLevel                slog.Level
	rebalanceDelay          time.Duration
	sendBuffer              int
	listeners               listenerSettings   // listeners.go
	uplink                  uplinkSettings     // uplink.go
	security                securitySettings   // security.go
	authorizer              authorizerSettings // authorizer.go
	metrics                 metricsSettings    // metrics.go
	validation              validationSettings // validation.go
	cleaner                 cleanerSettings    // cleaner.go
	cluster                 clusterSettings    // cluster.go

	groups groupSettings // groups.go

	quotaWindowNum  int           // Kafka quota.window.num
	quotaWindowSize time.Duration // Kafka quota.window.size.seconds

	clientMetrics         string        // KIP-714 subscription: prefixes, "*" all, "" none
	clientMetricsInterval time.Duration // its push interval
}

// errUsage marks errors already reported with the usage text.
var errUsage = errors.New("usage")

func parseSettings(args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (settings, error) {
	return parseSettingsHelp(args, lookupEnv, stderr, stderr)
}

// parseSettingsHelp is parseSettings with -h's usage going to help (stdout,
// so that `minikafka -h | grep sasl` works, as rpk's and kcat's help do).
func parseSettingsHelp(args []string, lookupEnv func(string) (string, bool), help, stderr io.Writer) (settings, error) {
	s := settings{}
	fs := flag.NewFlagSet("minikafka", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.listen, "listen", ":9092", "`address` to listen on (host:port; port 0 picks a free port)")
	fs.StringVar(&s.advertise, "advertise", "", "`host:port` handed to clients in Metadata; port 0 means the bound port (default: the listen host, localhost if it is empty or 0.0.0.0/::, and the bound port)")
	fs.StringVar(&s.data, "data", "./data", "data `directory` (created if missing)")
	s.durability = "always"
	durability := func(v string) error {
		if _, err := logstore.ParseSyncPolicy(v); err != nil {
			return err
		}
		s.durability = v
		return nil
	}
	fs.Func("durability", "fsync `policy`: always (acks=all answered after fsync), never, or interval=DURATION (default always)", durability)
	fs.Func("fsync", "fsync `policy`, same as -durability", durability)
	fs.BoolVar(&s.inMemory, "in-memory", false, "keep everything in memory (nothing survives exit; -data is ignored)")
	fs.IntVar(&s.nodeID, "node-id", 0, "broker node `id` (Kafka node.id); with -nodes, the first node's")
	s.cluster.register(fs)
	fs.IntVar(&s.partitions, "default-partitions", 1, "partitions of auto-created topics (Kafka num.partitions)")
	fs.BoolVar(&s.autoCreate, "auto-create-topics", true, "create topics on first use (Kafka auto.create.topics.enable)")
	fs.TextVar(&s.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	fs.IntVar(&s.sendBuffer, "socket-send-buffer-bytes", 0, "TCP send buffer of each client connection (Kafka socket.send.buffer.bytes); 0: 256 KiB, -1: the OS's autotuning")
	fs.IntVar(&s.quotaWindowNum, "quota-window-num", 11, "samples client quotas are measured over (Kafka quota.window.num)")
	fs.DurationVar(&s.quotaWindowSize, "quota-window-size", time.Second, "length of one quota sample (Kafka quota.window.size.seconds)")
	fs.StringVar(&s.clientMetrics, "client-metrics", "*", "comma-separated metric name prefixes every client is asked to push (KIP-714), shown on /metrics; * for all, empty for none")
	fs.DurationVar(&s.clientMetricsInterval, "client-metrics-interval", 30*time.Second, "push interval given to clients for their metrics")
	fs.DurationVar(&s.rebalanceDelay, "group-initial-rebalance-delay", 3*time.Second, "wait for more members before a new group's first rebalance (Kafka group.initial.rebalance.delay.ms)")
	s.listeners.register(fs)
	s.uplink.register(fs)
	s.security.register(fs)
	s.authorizer.register(fs)
	s.metrics.register(fs)
	s.validation.register(fs)
	s.cleaner.register(fs)
	s.groups.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: minikafka [flags]\n       minikafka COMMAND [flags] ...\n\nRuns a single-node Kafka-compatible broker. Every flag can also be set\nwith MINIKAFKA_<FLAG> (upper case, '-' as '_'); flags win.\n\n")
		printCommands(w)
		fmt.Fprintf(w, "\nBroker flags:\n")
		fs.PrintDefaults()
	}

	// The environment first, so the command line overrides it.
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "fsync" || envErr != nil {
			return
		}
		name := "MINIKAFKA_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := lookupEnv(name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("invalid value %q for %s: %v", v, name, err)
			}
		}
	})
	if envErr != nil {
		fmt.Fprintf(stderr, "minikafka: %v\n", envErr)
		return s, errUsage
	}
	if err := parseFlags(fs, args, help, stderr, "the flags"); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return s, flag.ErrHelp
		}
		return s, errUsage // parseFlags said what was wrong
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "minikafka: unexpected arguments: %q\nRun 'minikafka -h' for the flags.\n", fs.Args())
		return s, errUsage
	}
	var bad []string
	if s.nodeID < 0 || s.nodeID > 1<<31-1 {
		bad = append(bad, fmt.Sprintf("-node-id %d: must be between 0 and 2147483647", s.nodeID))
	}
	if s.partitions < 1 || s.partitions > 1<<20 {
		bad = append(bad, fmt.Sprintf("-default-partitions %d: must be between 1 and 1048576", s.partitions))
	}
	if s.rebalanceDelay < 0 {
		bad = append(bad, "-group-initial-rebalance-delay: must not be negative")
	}
	bad = append(bad, s.listeners.check(fs, s.listen, &s.security)...)
	bad = append(bad, s.uplink.check()...)
	bad = append(bad, s.groups.check()...)
	bad = append(bad, s.cleaner.check()...)
	bad = append(bad, s.cluster.check()...)
	bad = append(bad, s.security.check()...)
	bad = append(bad, s.authorizer.check()...)
	if len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintf(stderr, "minikafka: %s\n", b)
		}
		return s, errUsage
	}
	return s, nil
}

// run is main without the process exit; started, if not nil, receives the
// broker once it serves (tests).
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer, started chan<- *minikafka.Broker) int {
	if len(args) > 0 && args[0] == "forward-status" {
		return runForwardStatus(ctx, args[1:], lookupEnv, stdout, stderr) // status.go
	}
	if len(args) > 0 && cliVerbs[args[0]] != nil {
		return runCLI(ctx, args, cliEnv{stdin: os.Stdin, stdout: stdout, stderr: stderr, lookupEnv: lookupEnv}) // cli.go
	}
	if len(args) > 0 && args[0] != "" && !strings.HasPrefix(args[0], "-") {
		// A word where the broker takes only flags is a mistyped command,
		// not a reason to print every broker flag.
		fmt.Fprintf(stderr, "minikafka: unknown command %q%s\nRun 'minikafka -h' for the commands.\n", args[0], didYouMean(args[0], commandNames()))
		return 2
	}
	s, err := parseSettingsHelp(args, lookupEnv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: s.logLevel}))

	opts := []minikafka.Option{
		minikafka.WithNodeID(int32(s.nodeID)),
		minikafka.WithDefaultPartitions(int32(s.partitions)),
		minikafka.WithAutoCreateTopics(s.autoCreate),
		minikafka.WithDurability(s.durability),
		minikafka.WithLogger(log),
		minikafka.WithGroupInitialRebalanceDelay(s.rebalanceDelay),
		minikafka.WithSocketSendBufferBytes(s.sendBuffer),
		minikafka.WithQuotaWindow(s.quotaWindowNum, s.quotaWindowSize),
		minikafka.WithClientMetrics(s.clientMetricsInterval, splitList(s.clientMetrics)...),
	}
	opts = append(opts, s.cluster.options()...)
	if s.advertise != "" {
		opts = append(opts, minikafka.WithAdvertisedAddr(s.advertise))
	}
	lopts, err := s.listeners.options(s.listen, &s.security) // listeners.go
	if err != nil {
		fmt.Fprintf(stderr, "minikafka: %v\n", err)
		return 2
	}
	if lopts == nil {
		lopts = []minikafka.Option{minikafka.WithListenAddr(s.listen)}
	}
	opts = append(opts, lopts...)
	uopts, err := s.uplink.options()
	if err != nil {
		fmt.Fprintf(stderr, "minikafka: %v\n", err)
		return 2
	}
	opts = append(opts, uopts...)
	sopts, err := s.security.options()
	if err != nil {
		fmt.Fprintf(stderr, "minikafka: %v\n", err)
		return 2
	}
	opts = append(opts, sopts...)
	aopts, err := s.authorizer.options()
	if err != nil {
		fmt.Fprintf(stderr, "minikafka: %v\n", err)
		return 2
	}
	opts = append(opts, aopts...)
	mopts, err := s.metrics.options()
	if err != nil {
		fmt.Fprintf(stderr, "minikafka: %v\n", err)
		return 2
	}
	opts = append(opts, mopts...)
	opts = append(opts, s.validation.options()...)
	opts = append(opts, s.cleaner.options()...)
	opts = append(opts, s.groups.options()...)
	if s.inMemory {
		opts = append(opts, minikafka.WithInMemory())
	} else {
		if err := checkDataDir(s.data); err != nil {
			fmt.Fprintf(stderr, "minikafka: data directory %s is not usable: %v\n", s.data, err)
			return 1
		}
		opts = append(opts, minikafka.WithDataDir(s.data))
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := minikafka.Start(ctx, opts...)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "minikafka: interrupted while starting")
		} else if errors.Is(err, syscall.EADDRINUSE) && s.listeners.used() {
			fmt.Fprintf(stderr, "%v\nminikafka: the address is already in use (another broker running? choose another port in -listeners)\n", err)
		} else if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintf(stderr, "minikafka: cannot listen on %s: the address is already in use (another broker running? choose another with -listen)\n", s.listen)
		} else {
			fmt.Fprintf(stderr, "%v\n", err)
		}
		return 1
	}
	// A durability policy means nothing for data that lives in memory.
	where := "in memory (lost on exit)"
	if d := b.DataDir(); d != "" {
		where = "in " + d + "; durability " + s.durability
	}
	// The console's URL, one a browser can open (a wildcard bind is
	// reachable on localhost).
	console := ""
	if a, ok := b.HTTPAddr().(*net.TCPAddr); ok {
		host := a.IP.String()
		if a.IP.IsUnspecified() {
			host = "localhost"
		}
		console = "; console on http://" + net.JoinHostPort(host, strconv.Itoa(a.Port)) + "/"
	}
	fmt.Fprintf(stdout, "minikafka %s; data %s%s\n", describeListeners(b, s.listeners.used()), where, console)
	if a := b.AdminAddr(); a != nil {
		fmt.Fprintf(stdout, "minikafka control API at http://%s/v1/\n", a) // tests read the bound port here
	}
	if u := b.SchemaRegistryURL(); u != "" {
		fmt.Fprintf(stdout, "minikafka schema registry at %s\n", u)
	}
	if s.uplink.upstream != "" {
		// An edge broker says where its records go: nothing else shows it
		// until forward-status is asked.
		fmt.Fprintf(stdout, "minikafka forwarding %s to upstream %s\n", strings.Join(s.uplink.forward, " "), s.uplink.upstream)
	}
	if started != nil {
		started <- b
	}

	<-ctx.Done()
	stop() // a second signal kills the process the default way
	log.Info("shutting down")
	if err := b.Close(); err != nil {
		fmt.Fprintf(stderr, "minikafka: shutdown: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "minikafka stopped")
	return 0
}

// commandNames are the words minikafka takes before its flags, sorted.
func commandNames() []string {
	names := []string{"forward-status"}
	for n := range cliVerbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// printCommands lists every command with its one-line summary.
func printCommands(w io.Writer) {
	fmt.Fprintf(w, "Commands (client verbs work against any Kafka broker; control verbs need the broker's -admin-addr):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range commandNames() {
		summary := "Shows the forwarding state of a running broker"
		if v := cliVerbs[n]; v != nil {
			summary = v.summary
			if v.sub == nil {
				summary = v.cmd.summary
			}
			summary, _, _ = strings.Cut(summary, "\n")
			summary, _, _ = strings.Cut(summary, ". ")
			summary = strings.TrimSuffix(summary, ".")
		}
		fmt.Fprintf(tw, "  %s\t%s\n", n, summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "Run 'minikafka COMMAND -h' for a command's sub-commands and flags.\n")
}

// didYouMean suggests the command closest to word: one it starts, one
// that starts it (topics, topic), or one a typo or two away.
func didYouMean(word string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if strings.HasPrefix(n, word) || strings.HasPrefix(word, n) {
			return "; did you mean " + n + "?"
		}
		if d := editDistance(word, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// checkDataDir creates dir if needed and checks that it can be listed and
// written, so a bad path fails with a plain message before anything starts.
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.ReadDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".minikafka-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// parseFlags parses args with fs. -h prints fs's usage to help (stdout)
// and returns flag.ErrHelp; a bad flag or value is one line on stderr
// naming the command, then where to look (what: "the flags", "its
// flags"), instead of flag's default of the whole flag list after the
// error.
func parseFlags(fs *flag.FlagSet, args []string, help, stderr io.Writer, what string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(help)
		usage()
		fs.SetOutput(stderr)
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\nRun '%s -h' for %s.\n", fs.Name(), err, fs.Name(), what)
	}
	return err
}

package main

// The client verbs: minikafka topic|produce|consume|group|cluster|quota|acl
// talk to any Kafka-compatible broker through kgo/kadm, so they work
// against minikafka, Apache Kafka or Redpanda alike. Every verb takes the common
// flags (clientFlags), prints a table for people or JSON with -o json, and
// exits 0 on success, 1 when the operation failed (one line on stderr
// saying why, naming the topic or group) and 2 for a bad command line.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// cliEnv is what a verb reads and writes: tests hand it buffers.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
}

// cliVerb is one top-level client verb; sub lists its sub-verbs (nil for
// produce and consume, which have none).
type cliVerb struct {
	summary string
	sub     map[string]cliCommand
	cmd     cliCommand // verbs without sub-verbs
}

// cliCommand is one command: setup registers its flags on c and returns
// what runs once they are parsed.
type cliCommand struct {
	usage, summary string
	setup          func(c *cliCmd) func(ctx context.Context) error
}

// cliVerbs is filled by each verb's file.
var cliVerbs = map[string]*cliVerb{}

// errUsageCLI marks a bad command line (exit 2); its message is printed.
type errUsageCLI struct{ msg string }

func (e errUsageCLI) Error() string { return e.msg }

func usagef(format string, args ...any) error { return errUsageCLI{fmt.Sprintf(format, args...)} }

// errFlagSaid is a flag parse error parseFlags has already printed.
type errFlagSaid struct{ err error }

func (e errFlagSaid) Error() string { return e.err.Error() }
func (e errFlagSaid) Unwrap() error { return e.err }

// cliCmd is one invocation: its flag set (common flags plus the verb's),
// the positional arguments once parsed, and the client it opens lazily.
type cliCmd struct {
	name string // "topic create"
	env  cliEnv
	fs   *flag.FlagSet
	cf   clientFlags
	args []string

	cl  *kgo.Client
	adm *kadm.Client

	// untimed, if set by a verb and true once flags are parsed, runs the
	// verb without the default -timeout (a consume -follow tail); an
	// explicit -timeout still bounds it.
	untimed func() bool

	// controlVerb marks a verb that talks to the control API
	// (-admin-addr), not Kafka: the Kafka connection flags mean nothing
	// to it and are refused rather than ignored.
	controlVerb bool
}

// kafkaConnFlags are the common flags that only a Kafka connection uses.
var kafkaConnFlags = []string{"b", "brokers", "tls", "tls-ca", "tls-cert", "tls-key", "tls-insecure",
	"sasl-mechanism", "sasl-user", "sasl-password", "client-id"}

// checkControlFlags refuses Kafka connection flags on a control verb.
func (c *cliCmd) checkControlFlags() error {
	if !c.controlVerb {
		return nil
	}
	for _, n := range kafkaConnFlags {
		if c.flagGiven(n) {
			return usagef("-%s: %s talks to the broker's control API, not over Kafka; name it with -admin-addr HOST:PORT", n, c.name)
		}
	}
	return nil
}

// flagGiven reports whether the command line set the flag.
func (c *cliCmd) flagGiven(name string) bool {
	given := false
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}

// clientFlags are the flags every verb has.
type clientFlags struct {
	brokers                string
	output                 string
	timeout                time.Duration
	tls                    bool
	tlsCA, tlsCert, tlsKey string
	tlsInsecure            bool
	saslMechanism          string
	saslUser, saslPassword string
	clientID               string
}

func newCLICmd(name string, env cliEnv) *cliCmd {
	c := &cliCmd{name: name, env: env, fs: flag.NewFlagSet("minikafka "+name, flag.ContinueOnError)}
	c.fs.SetOutput(env.stderr)
	def := "localhost:9092"
	if v, ok := env.lookupEnv("MINIKAFKA_BROKERS"); ok && v != "" {
		def = v
	}
	f := &c.cf
	c.fs.StringVar(&f.brokers, "brokers", def, "comma-separated `host:port` seed brokers (env MINIKAFKA_BROKERS)")
	c.fs.StringVar(&f.brokers, "b", def, "short for -brokers")
	c.fs.StringVar(&f.output, "o", "table", "output: table or json")
	c.fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "give up after this long")
	c.fs.BoolVar(&f.tls, "tls", false, "connect with TLS")
	c.fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM `file` of CAs to trust (implies -tls)")
	c.fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM client certificate `file` (implies -tls)")
	c.fs.StringVar(&f.tlsKey, "tls-key", "", "PEM client key `file`")
	c.fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "do not verify the broker's certificate")
	c.fs.StringVar(&f.saslMechanism, "sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	c.fs.StringVar(&f.saslUser, "sasl-user", "", "SASL user name")
	pw, _ := env.lookupEnv("MINIKAFKA_SASL_PASSWORD")
	c.fs.StringVar(&f.saslPassword, "sasl-password", pw, "SASL password (env MINIKAFKA_SASL_PASSWORD)")
	c.fs.StringVar(&f.clientID, "client-id", "minikafka-cli", "client.id sent to the broker")
	return c
}

// parse parses flags wherever they stand among the positional arguments
// (`topic create t -p 3` as well as `topic create -p 3 t`).
func (c *cliCmd) parse(args []string) error {
	var pos []string
	for {
		if err := parseFlags(c.fs, args, c.env.stdout, c.env.stderr, "its flags"); err != nil {
			return errFlagSaid{err}
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	c.args = pos
	switch c.cf.output {
	case "table", "json":
	default:
		return usagef("-o %q: want table or json", c.cf.output)
	}
	return nil
}

func (c *cliCmd) json() bool { return c.cf.output == "json" }

// opts are the kgo options for the common flags.
func (c *cliCmd) opts() ([]kgo.Opt, error) {
	f := c.cf
	seeds := strings.Split(f.brokers, ",")
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(f.clientID), kgo.DialTimeout(5 * time.Second),
		kgo.RequestRetries(2), kgo.RetryTimeout(f.timeout)}
	if f.tls || f.tlsCA != "" || f.tlsCert != "" || f.tlsInsecure {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.tlsInsecure} //nolint:gosec // the user asked
		if f.tlsCA != "" {
			pem, err := os.ReadFile(f.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("-tls-ca %s: no PEM certificates", f.tlsCA)
			}
			cfg.RootCAs = pool
		}
		if f.tlsCert != "" || f.tlsKey != "" {
			cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	switch strings.ToUpper(f.saslMechanism) {
	case "":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: f.saslUser, Pass: f.saslPassword}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: f.saslUser, Pass: f.saslPassword}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: f.saslUser, Pass: f.saslPassword}.AsSha512Mechanism()))
	default:
		return nil, usagef("-sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", f.saslMechanism)
	}
	return opts, nil
}

// client opens the kgo client (and its admin) with the common flags plus
// extra.
func (c *cliCmd) client(extra ...kgo.Opt) (*kgo.Client, *kadm.Client, error) {
	if c.cl != nil {
		return c.cl, c.adm, nil
	}
	opts, err := c.opts()
	if err != nil {
		return nil, nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, nil, err
	}
	c.cl, c.adm = cl, kadm.NewClient(cl)
	return c.cl, c.adm, nil
}

func (c *cliCmd) close() {
	if c.cl != nil {
		c.cl.Close()
	}
}

// printJSON writes v as indented JSON.
func (c *cliCmd) printJSON(v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.env.stdout, "%s\n", js)
	return err
}

// answer prints out as JSON, or rows under header as a table, and returns
// failed: the first failure of a per-item operation, or nil.
func (c *cliCmd) answer(out any, header []string, rows [][]string, failed error) error {
	if c.json() {
		if err := c.printJSON(out); err != nil {
			return err
		}
	} else {
		c.table(header, rows)
	}
	return failed
}

// partOutcome is one partition's result of an offset change: the offset
// it now has (a group's commit for seek, the log start for trim).
type partOutcome struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error,omitempty"`
}

// answerPartitions prints partition outcomes sorted, with offsetHeader
// naming what the offset is; errOf names a failed partition's error for
// stderr.
func (c *cliCmd) answerPartitions(out []partOutcome, offsetHeader string, errOf func(partOutcome) error) error {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	var rows [][]string
	var ok []bool
	var errs []error
	for _, o := range out {
		rows = append(rows, []string{o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10), statusText(o.Error)})
		ok = append(ok, o.Error == "")
		if o.Error != "" {
			errs = append(errs, errOf(o))
		}
	}
	return c.answerItems(out, []string{"TOPIC", "PARTITION", offsetHeader, "STATUS"}, rows, ok, errs)
}

// statusText is a per-item status column: OK or the error.
func statusText(errMsg string) string {
	if errMsg == "" {
		return "OK"
	}
	return errMsg
}

// table writes rows under a header, aligned.
func (c *cliCmd) table(header []string, rows [][]string) {
	w := tabwriter.NewWriter(c.env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	w.Flush()
}

// reachErr turns a client error into the one line a user reads.
func (c *cliCmd) reachErr(err error) error {
	if err == nil {
		return nil
	}
	var ue errUsageCLI
	if errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "connect: connection refused") ||
		strings.Contains(err.Error(), "unable to dial") {
		return fmt.Errorf("cannot reach a broker at %s: %v", c.cf.brokers, err)
	}
	return err
}

// runCLI runs a client verb; args[0] is the verb.
func runCLI(ctx context.Context, args []string, env cliEnv) int {
	v := cliVerbs[args[0]]
	name := args[0]
	rest := args[1:]
	cmd := v.cmd
	if v.sub != nil {
		if len(rest) == 0 {
			printVerbUsage(env.stderr, name, v)
			return 2
		}
		if rest[0] == "-h" || rest[0] == "-help" || rest[0] == "--help" {
			printVerbUsage(env.stdout, name, v) // asked for: stdout, for a pipe
			return 0
		}
		sc, ok := v.sub[rest[0]]
		if !ok && strings.HasPrefix(rest[0], "-") {
			fmt.Fprintf(env.stderr, "minikafka %s: want the command before its flags (minikafka %s <command> [flags]), not %q\nRun 'minikafka %s -h' for its commands.\n", name, name, rest[0], name)
			return 2
		}
		if !ok {
			// As for an unknown verb: the error, the closest command, and
			// where the list is.
			var names []string
			for n := range v.sub {
				names = append(names, n)
			}
			sort.Strings(names)
			fmt.Fprintf(env.stderr, "minikafka %s: unknown command %q%s\nRun 'minikafka %s -h' for its commands.\n", name, rest[0], didYouMean(rest[0], names), name)
			return 2
		}
		name += " " + rest[0]
		rest = rest[1:]
		cmd = sc
	}
	c := newCLICmd(name, env)
	run := cmd.setup(c)
	c.fs.Usage = func() {
		fmt.Fprintf(c.fs.Output(), "Usage: minikafka %s\n\nFlags:\n", cliUsageLine(args[0], name, v))
		c.fs.PrintDefaults()
	}
	err := c.parse(rest)
	if err == nil {
		err = c.checkControlFlags()
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var said errFlagSaid
		if errors.As(err, &said) {
			return 2 // parseFlags printed it
		}
		var ue errUsageCLI
		if errors.As(err, &ue) {
			fmt.Fprintf(env.stderr, "minikafka %s: %v\n", name, err)
		}
		return 2
	}
	defer c.close()
	// A short-lived client process that moves many records trades memory
	// for less garbage collection, as a batch tool should.
	if args[0] == "produce" || args[0] == "consume" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	cancel := context.CancelFunc(func() {})
	if c.untimed == nil || !c.untimed() || c.flagGiven("timeout") {
		ctx, cancel = context.WithTimeout(ctx, c.cf.timeout)
	}
	defer cancel()
	if err := c.reachErr(run(ctx)); err != nil {
		sayErr(env.stderr, name, err)
		var ue errUsageCLI
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// sayErr prints a failure: each line (a per-item operation joins one a
// failed item) prefixed with the command, and a line repeated by several
// items (the same refusal for each) said once.
func sayErr(w io.Writer, name string, err error) {
	seen := map[string]bool{}
	for l := range strings.SplitSeq(err.Error(), "\n") {
		if !seen[l] {
			seen[l] = true
			fmt.Fprintf(w, "minikafka %s: %s\n", name, l)
		}
	}
}

// answerItems answers a per-item operation (delete these topics, create
// these ACLs, ...): as JSON every item with its error, as a table the
// items that succeeded. Each failure is said once, on stderr, as the
// returned error (errs holds one failure per failed item, in order).
func (c *cliCmd) answerItems(out any, header []string, rows [][]string, ok []bool, errs []error) error {
	if c.json() {
		if err := c.printJSON(out); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	var shown [][]string
	for i, r := range rows {
		if ok[i] {
			shown = append(shown, r)
		}
	}
	if len(shown) > 0 || len(errs) == 0 { // nothing done, nothing failed: an empty table
		c.table(header, shown)
	}
	return errors.Join(errs...)
}

func cliUsageLine(verb, name string, v *cliVerb) string {
	if v.sub == nil {
		return verb + " " + v.cmd.usage + "\n\n" + v.cmd.summary
	}
	sub := strings.TrimPrefix(name, verb+" ")
	return name + " " + v.sub[sub].usage
}

func printVerbUsage(w io.Writer, name string, v *cliVerb) {
	fmt.Fprintf(w, "Usage: minikafka %s <command> [flags]\n\n%s\n\nCommands:\n", name, v.summary)
	var names []string
	for n := range v.sub {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range names {
		fmt.Fprintf(tw, "  %s %s\t%s\n", n, v.sub[n].usage, v.sub[n].summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRun 'minikafka %s <command> -h' for its flags.\n", name)
}

// admin checks the positional argument count and opens the admin client.
func (c *cliCmd) admin(min, max int, what string) (*kadm.Client, error) {
	if err := c.needArgs(min, max, what); err != nil {
		return nil, err
	}
	_, adm, err := c.client()
	return adm, err
}

// needArgs checks the positional argument count.
func (c *cliCmd) needArgs(min, max int, what string) error {
	if len(c.args) < min || (max >= 0 && len(c.args) > max) {
		return usagef("want %s", what)
	}
	return nil
}

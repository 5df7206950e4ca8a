package bench

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// ServeKfake runs a kfake cluster on 127.0.0.1 (free ports) until
// SIGINT/SIGTERM. Flags: -brokers (kfake.NumBrokers, default 1),
// -data-dir (persist there), -sync (fsync every batch; needs -data-dir).
// It prints "kfake listening on ADDR" with the first broker's address.
// This is cmd/kfakebroker's main; the package test runs it in a child.
func ServeKfake(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kfakebroker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "persist to this `directory` (kfake.DataDir)")
	brokers := fs.Int("brokers", 1, "`number` of brokers (kfake.NumBrokers)")
	sync := fs.Bool("sync", false, "fsync every batch (kfake.SyncWrites); needs -data-dir")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *sync && *dataDir == "" {
		fmt.Fprintln(stderr, "kfakebroker: -sync needs -data-dir")
		return 2
	}
	opts := []kfake.Opt{kfake.NumBrokers(*brokers)}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir))
	}
	if *sync {
		opts = append(opts, kfake.SyncWrites())
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "kfakebroker: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "kfake listening on %s\n", c.ListenAddrs()[0])
	<-sigs
	c.Close()
	return 0
}

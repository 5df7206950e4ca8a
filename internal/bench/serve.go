package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/minikafka/minikafka"
)

// ServeMinikafka is a minimal minikafka main taking the flags the harness
// passes to the real binary (-listen, -data, -durability, -log-level) plus
// -cpuprofile, for profiling the broker process (cmd/mkprof) and for the
// package test's children. It prints the same "listening on" line.
func ServeMinikafka(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mkprof", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "listen `address`")
	data := fs.String("data", "", "data `directory` (required)")
	durability := fs.String("durability", "never", "fsync `policy`")
	level := slog.LevelWarn
	fs.TextVar(&level, "log-level", slog.LevelWarn, "log `level`")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (%p: the pid)")
	authorizer := fs.Bool("authorizer", false, "enforce ACLs, as the real binary's -authorizer")
	allowEveryone := fs.Bool("allow-everyone-if-no-acl-found", false, "as the real binary's flag")
	nodes := fs.Int("nodes", 1, "simulated cluster `nodes` (minikafka.WithNodes), as the real binary's -nodes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *data == "" {
		fmt.Fprintln(stderr, "mkprof: -data is required")
		return 2
	}
	if *cpuprofile != "" {
		// %p in the name becomes the pid, so restarts keep their own.
		f, err := os.Create(strings.ReplaceAll(*cpuprofile, "%p", strconv.Itoa(os.Getpid())))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := []minikafka.Option{minikafka.WithListenAddr(*listen), minikafka.WithDataDir(*data),
		minikafka.WithDurability(*durability), minikafka.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))}
	if *nodes > 1 {
		opts = append(opts, minikafka.WithNodes(*nodes))
	}
	if *authorizer {
		opts = append(opts, minikafka.WithAuthorizer(minikafka.AuthorizerConfig{AllowEveryoneIfNoACLFound: *allowEveryone}))
	}
	b, err := minikafka.Start(ctx, opts...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "minikafka listening on %s, advertised as %s; data in %s\n", b.ListenAddr(), b.Addr(), *data)
	<-ctx.Done()
	if err := b.Close(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

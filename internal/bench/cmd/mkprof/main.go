// Command mkprof is a minimal minikafka main with -cpuprofile, for profiling
// the broker as its own process under mkbench's load:
//
//	go build -o /tmp/mkprof ./internal/bench/cmd/mkprof
//	go run ./internal/bench/cmd/mkbench -minikafka /tmp/mkprof -minikafka-arg=-cpuprofile=/tmp/mk.pprof -scenario produce-1k
//	go tool pprof -top /tmp/mkprof /tmp/mk.pprof
package main

import (
	"os"

	"github.com/minikafka/minikafka/internal/bench"
)

func main() { os.Exit(bench.ServeMinikafka(os.Args[1:], os.Stdout, os.Stderr)) }

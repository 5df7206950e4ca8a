// Command kfakebroker runs franz-go's kfake as a standalone one-broker
// process on 127.0.0.1, for the out-of-process comparison in mkbench.
//
//	go run ./internal/bench/cmd/kfakebroker [-data-dir DIR [-sync]]
package main

import (
	"os"

	"github.com/minikafka/minikafka/internal/bench"
)

func main() { os.Exit(bench.ServeKfake(os.Args[1:], os.Stdout, os.Stderr)) }

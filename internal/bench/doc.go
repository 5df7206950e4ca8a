// Package bench is the out-of-process benchmark harness for issue 3: it runs
// the minikafka binary and kfake (franz-go's fake broker, wrapped by
// cmd/kfakebroker) each as its own process on 127.0.0.1 with a fresh data
// directory, drives both with the same kgo load generator from the
// harness process, alternates the runs between them and reports medians.
//
// Model: a scenario starts one process per broker, then runs the workload
// Runs times on each, alternating which broker goes first each round, every
// run on a new topic. The broker's CPU cost is the delta of the CPU time of
// the broker process across the timed part of the run (its own cpu
// accounting cgroup where the harness may make one, in ns, else utime+stime
// from /proc/<pid>/stat in 10 ms ticks),
// divided by the payload bytes (record values) of that run; that figure does
// not include the client, unlike the in-process benchmarks in broker/.
// RSS is VmRSS of the broker process. Start-up time is measured from fork to
// the first answered Metadata request.
//
// cmd/mkbench is the command line; the package test runs a tiny scenario
// against children re-executed from the test binary, so the harness itself
// is exercised by go test without building binaries.
package bench

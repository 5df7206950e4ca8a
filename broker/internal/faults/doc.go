// Package faults is minikafka's fault injection engine: the faults a test
// installs to steer the broker into the failures a real cluster shows (an
// error code, a slow answer, a dropped connection), which requests each
// matches, how often it fires, and how an injected error is shaped as
// Kafka shapes it in each response.
//
// The broker keeps what needs its handlers and connections: Broker.Serve
// asks Set.Active (one atomic load of a nil pointer when no fault is set),
// then Active.Pick for the first fault that fires; it answers with
// Response, splits a produce, passes a partition-scoped error to the
// Fetch, ListOffsets and OffsetForLeaderEpoch handlers (WithPartition,
// PartitionCode), or runs the handler and lets Armed.Around delay, hold,
// swallow, throttle or drop its answer. The package takes decoded kmsg
// requests and a request's identity (Request) and imports neither broker
// nor protocol (internal/lint checks that).
//
// A Set's list of faults is copy-on-write behind one atomic pointer, its
// writers serialised by Set.mu; each fault's own mutex guards its random
// source and its gate of held answers. Both are leaves: nothing else is
// taken under them.
package faults

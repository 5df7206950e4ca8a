package main

import (
	"flag"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/protocol"
)

// validationSettings choose how much of a produced batch the broker checks.
type validationSettings struct {
	compressed  bool
	queuedBytes int64         // request memory budget (0: the default)
	readTimeout time.Duration // request read timeout (0: the default)
}

func (v *validationSettings) register(fs *flag.FlagSet) {
	fs.BoolVar(&v.compressed, "validate-compressed-records", true,
		"check each record of compressed produce batches by streaming through them, as Kafka does; =false stores them after header, CRC and frame checks only (faster, but a batch consumers cannot read may be acknowledged; compacted topics are always checked)")
	fs.Int64Var(&v.queuedBytes, "queued-max-request-bytes", 0,
		"request bytes held in memory at once across all connections, as Kafka's queued.max.request.bytes; requests over 64 KiB wait for room, fairly between connections and principals (0: 100 MiB)")
	fs.DurationVar(&v.readTimeout, "request-read-timeout", protocol.DefaultRequestReadTimeout,
		"close a connection whose request takes longer than this to arrive after its length prefix, time waiting for request memory aside (no Kafka equivalent: Kafka waits connections.max.idle.ms)")
}

func (v *validationSettings) options() []minikafka.Option {
	return []minikafka.Option{minikafka.WithCompressedRecordValidation(v.compressed),
		minikafka.WithQueuedMaxRequestBytes(v.queuedBytes), minikafka.WithRequestReadTimeout(v.readTimeout)}
}

package main

import (
	"flag"

	"github.com/minikafka/minikafka"
)

// validationSettings choose how much of a produced batch the broker checks.
type validationSettings struct {
	compressed  bool
	queuedBytes int64 // request memory budget (0: the default)
}

func (v *validationSettings) register(fs *flag.FlagSet) {
	fs.BoolVar(&v.compressed, "validate-compressed-records", true,
		"check each record of compressed produce batches by streaming through them, as Kafka does; =false stores them after header, CRC and frame checks only (faster, but a batch consumers cannot read may be acknowledged; compacted topics are always checked)")
	fs.Int64Var(&v.queuedBytes, "queued-max-request-bytes", 0,
		"request bytes held in memory at once across all connections, as Kafka's queued.max.request.bytes; requests wait for room (0: 100 MiB)")
}

func (v *validationSettings) options() []minikafka.Option {
	return []minikafka.Option{minikafka.WithCompressedRecordValidation(v.compressed),
		minikafka.WithQueuedMaxRequestBytes(v.queuedBytes)}
}

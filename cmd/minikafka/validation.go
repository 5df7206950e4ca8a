package main

import (
	"flag"

	"github.com/minikafka/minikafka"
)

// validationSettings choose how much of a produced batch the broker checks.
type validationSettings struct {
	compressed bool
}

func (v *validationSettings) register(fs *flag.FlagSet) {
	fs.BoolVar(&v.compressed, "validate-compressed-records", false,
		"decompress every compressed produce batch and check each record, as Kafka does (default: compressed batches are stored after header, CRC and frame checks; compacted topics are always checked)")
}

func (v *validationSettings) options() []minikafka.Option {
	return []minikafka.Option{minikafka.WithCompressedRecordValidation(v.compressed)}
}

package minikafka

// validation says which produced batches are decoded record by record.
type validation struct {
	compressed bool // every compressed batch, not only compacted topics'
}

// WithCompressedRecordValidation makes the broker decompress every
// compressed produce batch and check each record, as Apache Kafka does.
// Off (the default), a compressed batch is stored as sent after the checks
// that need no decompression: length, magic, CRC32C (which covers the
// compressed bytes), attributes, record count, producer fields, header
// timestamps and a sanity check of the codec's stream header. Batches of
// topics whose cleanup.policy contains compact are always validated fully,
// because every record needs a key. See broker/doc.go, "Compressed
// produce".
func WithCompressedRecordValidation(on bool) Option {
	return optionFunc(func(c *config) { c.validation.compressed = on })
}

package minikafka

// validation says which produced batches are decoded record by record.
type validation struct {
	// passthrough: compressed batches are not decoded (the opt-out); the
	// zero value validates them.
	passthrough bool
	// queuedMaxRequestBytes is the broker-wide request memory budget.
	queuedMaxRequestBytes int64
}

// WithCompressedRecordValidation(false) opts out of checking the records
// inside compressed produce batches. On (the default), every compressed
// batch is decoded by streaming through its records in bounded memory, as
// Apache Kafka's LogValidator does, and one a consumer could not read is
// refused with CORRUPT_MESSAGE or INVALID_RECORD. Off, a compressed batch is
// stored as sent after the checks that need no decompression (length,
// magic, CRC32C over the compressed bytes, attributes, record count,
// producer fields, header timestamps, the codec's stream header): faster,
// but a batch whose compressed body is broken is acknowledged and then
// stops every consumer at that offset. Topics whose cleanup.policy
// contains compact are always validated, because every record needs a key.
// See broker/doc.go, "Compressed produce".
func WithCompressedRecordValidation(on bool) Option {
	return optionFunc(func(c *config) { c.validation.passthrough = !on })
}

// WithQueuedMaxRequestBytes bounds the request bytes the broker holds in
// memory at once across all connections and listeners (Kafka's
// queued.max.request.bytes; default protocol.DefaultQueuedMaxRequestBytes,
// 100 MiB). A frame is read as its bytes arrive and admitted to the budget
// once its first 64 KiB are in; a request that does not fit waits its turn
// instead of allocating, and one larger than the whole budget is admitted
// alone. See protocol.Budget.
func WithQueuedMaxRequestBytes(n int64) Option {
	return optionFunc(func(c *config) { c.validation.queuedMaxRequestBytes = n })
}

package minikafka

import "time"

// validation says which produced batches are decoded record by record.
type validation struct {
	// passthrough: compressed batches are not decoded (the opt-out); the
	// zero value validates them.
	passthrough bool
	// requestReadTimeout bounds how long a request frame may take to
	// arrive (0: protocol.DefaultRequestReadTimeout).
	requestReadTimeout time.Duration
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
// 100 MiB). Requests of up to 64 KiB never wait; a larger one takes memory
// once its first 64 KiB are in, and as its bytes arrive (all at once when
// most of it is already there). A request that does not fit waits, served
// fairly between connections and principals; when only half-read requests
// stand in the way, one request at a time may go past the budget, so
// memory for requests is at most the budget plus one request. See
// protocol.Budget.
func WithQueuedMaxRequestBytes(n int64) Option {
	return optionFunc(func(c *config) { c.validation.queuedMaxRequestBytes = n })
}

// WithRequestReadTimeout bounds how long a request may take to arrive once
// its length prefix has (default protocol.DefaultRequestReadTimeout, 30 s),
// not counting time it waits for request memory: a client whose request
// stops arriving is logged and its connection closed, so it cannot hold
// memory or its connection's turn for longer. Kafka has no such bound.
func WithRequestReadTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.validation.requestReadTimeout = d })
}

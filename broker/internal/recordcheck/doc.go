// Package recordcheck is the record-level validation of produced batches
// (Check), and the passthrough of compressed ones. It knows a topic only
// by its name and its configs; the broker calls it from produceTo, after
// the batch header's own checks.
//
// A compressed batch is stored exactly as the producer sent it (base
// offset and leader epoch rewritten, both outside the CRC), after the
// broker has checked everything Kafka's LogValidator checks: batch length,
// magic, CRC32C, attributes (known codec, no control bit, zstd only with
// Produce v7+), record count against the last offset delta, producer ID,
// epoch and sequence rules, and every record inside. The records are read
// by streaming (records.Scanner): the body goes through the codec's
// decompressing reader (pooled decoders) into a 16 KiB buffer, each
// record's fixed fields are decoded and its key, value and header bytes
// skipped, as Kafka's skipKeyValueIterator does, and the stream must then
// end cleanly (trailer and checksums read). Memory per batch is the
// codec's state (gzip window, one lz4 block, a zstd window of at most
// 8 MiB, a snappy back-reference window of at most 8 MiB) whatever the
// batch inflates to; records.ScanPool bounds how many batches inflate at
// once (GOMAXPROCS, at least 2), so a decompression bomb costs CPU, not
// memory. A body that does not decompress (bad or truncated stream,
// failed codec checksum) is CORRUPT_MESSAGE; a stream that decompresses
// but does not hold NumRecords well-formed records, or holds more bytes, is
// INVALID_RECORD; more than max(64 MiB, 4 × max.message.bytes) of
// decompressed data is MESSAGE_TOO_LARGE. Nothing a consumer could not
// decode is acknowledged.
//
// A topic whose compression.type names a codec (or uncompressed) is the
// one exception to "stored as sent": a validated batch in another codec is
// rebuilt in the topic's codec (records.Recompress: records unchanged,
// header fields kept, CRC recomputed), at most ScanPool.Slots() at once
// since each holds its decompressed records, and refused with
// MESSAGE_TOO_LARGE if the result exceeds max.message.bytes.
//
// Config.PassCompressedRecords (-validate-compressed-records=false) opts
// out, for speed: a compressed batch is then checked only from its header
// and the codec's stream header (records.CheckFrame: gzip member header,
// zstd and lz4 frame descriptors, snappy block or xerial header), and the
// header's timestamps against message.timestamp.type and
// message.timestamp.{before,after}.max.ms. Kafka's CRC32C covers the
// compressed bytes, so corruption in transit is still caught; what is
// given up is a producer bug inside a compressed body (a stream that does
// not decompress, malformed records, offset deltas that do not count up, a
// record timestamp outside the header's bounds): it is acknowledged and
// then stops every consumer at that offset. Topics whose cleanup.policy
// contains compact are always validated, because every record there needs
// a key (Kafka: INVALID_RECORD, "Compacted topic cannot accept message
// without key") and the compactor must be able to decode every batch; so
// are forwarded topics, whose forwarder decodes batches and must never
// meet one it cannot decode.
//
// Record-level failures are reported as Kafka does: all offending records
// of the batch are collected, the whole batch is rejected (nothing is
// stored) with INVALID_TIMESTAMP if any timestamp is out of range, else
// INVALID_RECORD, and Produce v8+ carries record_errors (batch index and
// message) and Kafka's error_message. When only the header's timestamps
// look out of range, a passed-through batch is decoded after all, so the
// answer names the same records Kafka's would.
package recordcheck

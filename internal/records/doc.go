// Package records parses and validates Kafka v2 RecordBatches, the unit
// minikafka stores and serves without re-encoding.
//
// Layout of a batch (big-endian; Length counts the bytes after itself; the
// CRC32C (Castagnoli) covers Attributes through the end, so the broker can
// rewrite BaseOffset and PartitionLeaderEpoch without recomputing it):
//
//	off len field
//	  0   8 BaseOffset
//	  8   4 Length
//	 12   4 PartitionLeaderEpoch
//	 16   1 Magic (2)
//	 17   4 CRC
//	 21   2 Attributes  (bits 0-2 codec, 3 LogAppendTime, 4 transactional, 5 control, 6 delete horizon)
//	 23   4 LastOffsetDelta
//	 27   8 FirstTimestamp
//	 35   8 MaxTimestamp
//	 43   8 ProducerID
//	 51   2 ProducerEpoch
//	 53   4 BaseSequence
//	 57   4 NumRecords
//	 61     records, compressed as a whole with the codec
//
// Each record is a varint length followed by: attributes int8, timestamp
// delta varlong, offset delta varint, key (varint length, -1 = null), value,
// header count varint, then headers (key, value) with the same encoding.
//
// Validate checks the frame (length, magic, CRC, count); Records decodes the
// records, decompressing with a caller-given limit so that no size prefix or
// compression ratio can make it allocate more than that limit. CheckFrame
// looks only at a compressed body's stream header (gzip, zstd, lz4 frame,
// snappy block or xerial header): the cheap sanity check a broker makes
// when it stores compressed batches without decompressing them.
package records

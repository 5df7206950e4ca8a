package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// errCode is the one place Go errors from storage and record validation
// become Kafka error codes. Handlers never pick a code for a storage error
// themselves.
func errCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, logstore.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, logstore.ErrClosed):
		// The partition went away under the request (topic deleted or
		// broker closing): retriable, the client refreshes metadata.
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, records.ErrCorrupt), errors.Is(err, records.ErrUnsupportedCompression):
		return kerr.CorruptMessage.Code
	case errors.Is(err, records.ErrInvalidMagic), errors.Is(err, records.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, records.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	}
	// Anything else from storage is an I/O failure (failed write or
	// fsync, which logstore and the spool make sticky; a full spool; a
	// topic, producer-ID or transaction file that could not be written).
	return kerr.KafkaStorageError.Code
}

// createErrCode is the code for a topic or partitions that could not be
// created (their directories, logs, topic.json): a storage failure, as
// Kafka's controller answers when a write of the change fails
// (ApiError.fromThrowable of a KafkaStorageException); every failure here
// is a write (the topic's ID comes from crypto/rand, which cannot fail).
// Clients retry it, where UNKNOWN_SERVER_ERROR is fatal to them.
func createErrCode(err error) int16 {
	if err == nil {
		return 0
	}
	return kerr.KafkaStorageError.Code
}

// coordinatorErrCode is the code for a group or transaction coordinator
// whose state could not be written (offsets, the transaction log, a
// producer-ID block): NOT_COORDINATOR, what Kafka's coordinators answer
// when their log append fails with KAFKA_STORAGE_ERROR (their partition's
// log dir went offline, so the coordinator moves). Clients look the
// coordinator up again and retry; here they find the same broker, which
// takes the write once there is space.
func coordinatorErrCode(err error) int16 {
	if err == nil {
		return 0
	}
	return kerr.NotCoordinator.Code
}

// errMessage is the error message Kafka puts next to a code (v8+ produce,
// create topics, ...): the Go error's text, or nil when there is none.
func errMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

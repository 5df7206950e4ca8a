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
	case errors.Is(err, errBadTimestamp):
		return kerr.InvalidTimestamp.Code
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	}
	// Anything else from storage is an I/O failure (failed write or
	// fsync, which logstore makes sticky).
	return kerr.KafkaStorageError.Code
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

package uplink

// Idempotence state of a forwarded partition, kept across a crash.
//
// A forwarded partition's records leave its spool as soon as the upstream
// acknowledges them, so after a restart the spool's tail may hold nothing
// of a producer that was writing a moment before. Without its state the
// partition would accept that producer's next batch whatever its sequence
// (as Kafka does for an unknown producer), so a batch sent after one the
// crash took back would be accepted ahead of its resend: the records
// would be reordered. Kafka keeps producer state beyond the deletion of
// the batches that built it (producer snapshots); here each commit of
// acknowledged records first writes the partition's producer state to
// <spool dir>.producers (atomically, fsynced unless durability is never),
// and a restart loads it before rebuilding from the spool's tail. The
// state is the broker's (it judges produced sequences) and so is its
// encoding (Partition.Producers); the uplink keeps the bytes.

import (
	"errors"
	"io/fs"

	"github.com/minikafka/minikafka/internal/vfs"
)

func producersPath(spoolDir string) string { return spoolDir + ".producers" }

// saveProducers writes the partition's producer state if it changed since
// the last write; commit calls it before deleting acknowledged records.
func (f *Forwarder) saveProducers() error {
	data, gen := f.p.Producers(f.producersSavedGen, f.producersSaved != nil)
	if data == nil {
		return nil // unchanged since the last write
	}
	if string(data) == string(f.producersSaved) {
		f.producersSavedGen = gen
		return nil
	}
	if err := f.replaceStateFile(f.producersPath, data); err != nil {
		return err
	}
	f.producersSaved, f.producersSavedGen = data, gen
	return nil
}

// useSpool makes the spool the partition's store, handing it the saved
// producer state. A damaged file is reported and ignored (the broker's
// rebuild from the spool's tail still runs).
func (f *Forwarder) useSpool() {
	data, err := vfs.ReadFile(f.u.env.FS, f.producersPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.u.log.Error("forwarding: unreadable producer state; rebuilding it from the spool's tail only", "file", f.producersPath, "err", err)
	}
	if err != nil {
		data = nil
	}
	gen, err := f.p.UseSpool(f, data)
	if err != nil {
		f.u.log.Error("forwarding: unreadable producer state; rebuilding it from the spool's tail only", "file", f.producersPath, "err", err)
		return
	}
	if data != nil {
		f.producersSaved, f.producersSavedGen = data, gen
	}
}

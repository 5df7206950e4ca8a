package minikafkatest

// Storage faults: a broker whose disk a test can make fail its fsyncs,
// run full or sync slowly, to see the broker answer KAFKA_STORAGE_ERROR
// and keep what it acknowledged. Request faults (errors, delays, drops,
// broker down) are on *minikafka.Broker itself: AddFault, PausePartition,
// Down, ...

import (
	"fmt"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
)

// Disk is the filesystem under a NewWithDisk broker, with switches: the
// broker's minikafka.StorageFaults (what -storage-faults gives the binary
// and POST /v1/storage drives). Its methods are safe for concurrent use.
type Disk struct {
	sf *minikafka.StorageFaults
}

// FailSync makes every fsync fail (EIO) while on. The log that saw the
// failure stays failed until the broker restarts, as Kafka takes a log
// dir offline: what it had not synced may be gone, but nothing it
// acknowledged.
func (d *Disk) FailSync(on bool) { d.sf.FailSync(on) }

// Full makes every write fail with ENOSPC while on.
func (d *Disk) Full(on bool) { d.sf.Full(on) }

// SlowSync makes every fsync take at least delay (0: as fast as the disk).
func (d *Disk) SlowSync(delay time.Duration) { d.sf.SlowSync(delay) }

// Failed is how many operations the switches failed.
func (d *Disk) Failed() int64 { return d.sf.State().Failed }

// NewWithDisk is New on a data dir behind switches: files are real (in
// t.TempDir()), every operation passes through them. It syncs every
// acknowledged write (durability always) so a failing fsync fails the
// produce that needed it.
func NewWithDisk(t testing.TB, opts ...minikafka.Option) (*minikafka.Broker, *Disk) {
	t.Helper()
	all := append([]minikafka.Option{minikafka.WithStorageFaults(), minikafka.WithDurability("always")}, opts...)
	b := New(t, all...)
	return b, &Disk{sf: b.StorageFaults()}
}

// String describes the switches.
func (d *Disk) String() string {
	st := d.sf.State()
	return fmt.Sprintf("fail sync %v, full %v, sync delay %v", st.FailSync, st.Full, st.SyncDelay)
}

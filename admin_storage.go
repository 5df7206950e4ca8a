package minikafka

import (
	"net/http"
	"time"
)

// Storage faults over the control API (docs/control-api.md): the
// StorageFaults switches of a broker started with -storage-faults.

func init() {
	adminRoutes = append(adminRoutes,
		adminRoute{"GET /v1/storage", adminStorage},
		adminRoute{"POST /v1/storage", adminSetStorage},
	)
}

type storageJSON struct {
	FailSync    bool    `json:"fail_sync"`
	Full        bool    `json:"full"`
	SyncDelayMs float64 `json:"sync_delay_ms"`
	Failed      int64   `json:"failed"`
}

func storageOf(b *Broker) (*StorageFaults, error) {
	if b.storage == nil {
		return nil, &adminError{http.StatusConflict, "the broker was not started with -storage-faults (WithStorageFaults)"}
	}
	return b.storage, nil
}

func storageState(sf *StorageFaults) storageJSON {
	st := sf.State()
	return storageJSON{st.FailSync, st.Full, float64(st.SyncDelay) / float64(time.Millisecond), st.Failed}
}

func adminStorage(b *Broker, _ *http.Request) (any, error) {
	sf, err := storageOf(b)
	if err != nil {
		return nil, err
	}
	return storageState(sf), nil
}

// adminSetStorage changes the switches given; the others stay.
func adminSetStorage(b *Broker, r *http.Request) (any, error) {
	sf, err := storageOf(b)
	if err != nil {
		return nil, err
	}
	var in struct {
		FailSync    *bool    `json:"fail_sync"`
		Full        *bool    `json:"full"`
		SyncDelayMs *float64 `json:"sync_delay_ms"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.SyncDelayMs != nil && (*in.SyncDelayMs < 0 || *in.SyncDelayMs > 60000) {
		return nil, badRequest("sync_delay_ms %v: want 0..60000", *in.SyncDelayMs)
	}
	if in.FailSync != nil {
		sf.FailSync(*in.FailSync)
	}
	if in.Full != nil {
		sf.Full(*in.Full)
	}
	if in.SyncDelayMs != nil {
		sf.SlowSync(time.Duration(*in.SyncDelayMs * float64(time.Millisecond)))
	}
	b.log.Warn("storage faults changed over the control API", "fail_sync", sf.State().FailSync, "full", sf.State().Full, "sync_delay", sf.State().SyncDelay)
	return storageState(sf), nil
}

package minikafka

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	adminRoutes = append(adminRoutes,
		adminRoute{"POST /v1/faults", adminAddFault},
		adminRoute{"GET /v1/faults", adminListFaults},
		adminRoute{"DELETE /v1/faults", adminClearFaults},
		adminRoute{"GET /v1/faults/{id}", adminGetFault},
		adminRoute{"DELETE /v1/faults/{id}", adminRemoveFault},
		adminRoute{"POST /v1/faults/{id}/release", adminReleaseFault},
		adminRoute{"POST /v1/faults/pause-partition", adminPausePartition},
		adminRoute{"POST /v1/faults/coordinator", adminCoordinator},
		adminRoute{"POST /v1/faults/throttle", adminThrottle},
		adminRoute{"POST /v1/faults/rtt", adminRTT},
		adminRoute{"GET /v1/broker", adminBrokerState},
		adminRoute{"POST /v1/broker/down", adminBrokerDown},
		adminRoute{"POST /v1/broker/up", adminBrokerUp},
		adminRoute{"GET /v1/requests", adminRequests},
	)
}

// FaultJSON is a fault as the control API reads and writes it
// (docs/control-api.md): POST /v1/faults takes one, GET /v1/faults lists
// them. The CLI (minikafka fault) speaks it too.
type FaultJSON struct {
	ID uint64 `json:"id,omitempty"`

	APIKeys         []int16 `json:"api_keys,omitempty"`
	MinVersion      *int16  `json:"min_version,omitempty"`
	MaxVersion      *int16  `json:"max_version,omitempty"`
	Topic           string  `json:"topic,omitempty"`
	Partition       *int32  `json:"partition,omitempty"`
	Group           string  `json:"group,omitempty"`
	TransactionalID string  `json:"transactional_id,omitempty"`
	ClientID        string  `json:"client_id,omitempty"`
	Listener        string  `json:"listener,omitempty"`
	Connection      uint64  `json:"connection,omitempty"`

	Times       int     `json:"times,omitempty"`
	Probability float64 `json:"probability,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`

	Error      string  `json:"error,omitempty"`      // a Kafka error name
	ErrorCode  int16   `json:"error_code,omitempty"` // or its code
	Drop       string  `json:"drop,omitempty"`       // "before" or "after"
	DelayMs    float64 `json:"delay_ms,omitempty"`
	DelayMaxMs float64 `json:"delay_max_ms,omitempty"`
	Hold       bool    `json:"hold,omitempty"`
	Swallow    bool    `json:"swallow,omitempty"`
	ThrottleMs int32   `json:"throttle_ms,omitempty"`

	// Out only.
	Fired int64 `json:"fired"`
	Done  bool  `json:"done"`
	Held  int   `json:"held"`
}

func (j *FaultJSON) fault() (Fault, error) {
	f := Fault{
		Keys: j.APIKeys, Topic: j.Topic, Group: j.Group, TxnID: j.TransactionalID,
		ClientID: j.ClientID, Listener: j.Listener, ConnID: j.Connection,
		Times: j.Times, Probability: j.Probability, Seed: j.Seed,
		ErrorCode: j.ErrorCode, Hold: j.Hold, Swallow: j.Swallow, ThrottleMillis: j.ThrottleMs,
	}
	for _, k := range j.APIKeys {
		if kmsg.NameForKey(k) == "Unknown" || k < 0 {
			return f, badRequest("api_keys: %d is not a Kafka API key", k)
		}
	}
	if j.MinVersion != nil || j.MaxVersion != nil {
		f.HasVersions, f.MinVersion, f.MaxVersion = true, 0, math.MaxInt16
		if j.MinVersion != nil {
			f.MinVersion = *j.MinVersion
		}
		if j.MaxVersion != nil {
			f.MaxVersion = *j.MaxVersion
		}
	}
	if j.Partition != nil {
		f.Partition, f.HasPartition = *j.Partition, true
	}
	if j.Error != "" {
		code, ok := broker.KafkaErrorCode(j.Error)
		if !ok {
			return f, badRequest("error: %q is not a Kafka error name (e.g. NOT_LEADER_OR_FOLLOWER)", j.Error)
		}
		if j.ErrorCode != 0 && j.ErrorCode != code {
			return f, badRequest("error %q is code %d, not error_code %d", j.Error, code, j.ErrorCode)
		}
		f.ErrorCode = code
	}
	switch j.Drop {
	case "":
	case "before":
		f.DropBefore = true
	case "after":
		f.DropAfter = true
	default:
		return f, badRequest("drop: %q, want \"before\" or \"after\"", j.Drop)
	}
	var err error
	if f.Delay, err = millis("delay_ms", j.DelayMs); err != nil {
		return f, err
	}
	if f.DelayMax, err = millis("delay_max_ms", j.DelayMaxMs); err != nil {
		return f, err
	}
	return f, nil
}

// millis converts a JSON millisecond count, refusing negative and absurd
// values (an hour bounds any delay a test wants).
func millis(field string, ms float64) (time.Duration, error) {
	if ms < 0 || ms > float64(time.Hour/time.Millisecond) || math.IsNaN(ms) {
		return 0, badRequest("%s: %v is not in [0, 3600000]", field, ms)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

func faultOut(fi FaultInfo) FaultJSON {
	f := fi.Fault
	j := FaultJSON{
		ID: fi.ID, APIKeys: f.Keys, Topic: f.Topic, Group: f.Group, TransactionalID: f.TxnID,
		ClientID: f.ClientID, Listener: f.Listener, Connection: f.ConnID,
		Times: f.Times, Probability: f.Probability, Seed: f.Seed,
		ErrorCode: f.ErrorCode, Error: broker.KafkaErrorName(f.ErrorCode), Hold: f.Hold, Swallow: f.Swallow,
		ThrottleMs: f.ThrottleMillis, DelayMs: float64(f.Delay) / float64(time.Millisecond),
		DelayMaxMs: float64(f.DelayMax) / float64(time.Millisecond),
		Fired:      fi.Fired, Done: fi.Done, Held: fi.Held,
	}
	if f.ErrorCode == 0 {
		j.Error = ""
	}
	if f.HasVersions {
		j.MinVersion, j.MaxVersion = &f.MinVersion, &f.MaxVersion
	}
	if f.HasPartition {
		j.Partition = &f.Partition
	}
	switch {
	case f.DropBefore:
		j.Drop = "before"
	case f.DropAfter:
		j.Drop = "after"
	}
	return j
}

func (b *Broker) faultAnswer(id uint64) (any, error) {
	for _, fi := range b.Faults() {
		if fi.ID == id {
			return faultOut(fi), nil
		}
	}
	return nil, notFound("no fault %d", id)
}

func adminAddFault(b *Broker, r *http.Request) (any, error) {
	var j FaultJSON
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	if j.ID != 0 || j.Fired != 0 || j.Done || j.Held != 0 {
		return nil, badRequest("id, fired, done and held are answers, not settings")
	}
	f, err := j.fault()
	if err != nil {
		return nil, err
	}
	return b.addFaultAnswer(f)
}

func (b *Broker) addFaultAnswer(f Fault) (any, error) {
	id, err := b.AddFault(f)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return b.faultAnswer(id)
}

func adminListFaults(b *Broker, _ *http.Request) (any, error) {
	out := []FaultJSON{}
	for _, fi := range b.Faults() {
		out = append(out, faultOut(fi))
	}
	return map[string]any{"faults": out}, nil
}

func adminClearFaults(b *Broker, _ *http.Request) (any, error) {
	b.ClearFaults()
	return nil, nil
}

func pathID(r *http.Request) (uint64, error) {
	s := r.PathValue("id")
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, badRequest("fault id %q is not a positive integer", s)
	}
	return id, nil
}

func adminGetFault(b *Broker, r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return b.faultAnswer(id)
}

func adminRemoveFault(b *Broker, r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if err := b.RemoveFault(id); errors.Is(err, ErrNoFault) {
		return nil, notFound("no fault %d", id)
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}

func adminReleaseFault(b *Broker, r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if err := b.ReleaseFault(id); errors.Is(err, ErrNoFault) {
		return nil, notFound("no fault %d", id)
	} else if err != nil {
		return nil, err
	}
	return b.faultAnswer(id)
}

func adminPausePartition(b *Broker, r *http.Request) (any, error) {
	var j struct {
		Topic     string `json:"topic"`
		Partition *int32 `json:"partition"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	if j.Topic == "" {
		return nil, badRequest("topic is required")
	}
	p := int32(-1)
	if j.Partition != nil {
		if *j.Partition < 0 {
			return nil, badRequest("partition %d is negative (leave it out for every partition)", *j.Partition)
		}
		p = *j.Partition
	}
	id, err := b.PausePartition(j.Topic, p)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return b.faultAnswer(id)
}

func adminCoordinator(b *Broker, r *http.Request) (any, error) {
	var j struct {
		Group   string `json:"group"`
		Loading bool   `json:"loading"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	if j.Group == "" {
		return nil, badRequest("group is required")
	}
	id, err := b.CoordinatorUnavailable(j.Group, j.Loading)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return b.faultAnswer(id)
}

func adminThrottle(b *Broker, r *http.Request) (any, error) {
	var j struct {
		ThrottleMs int32   `json:"throttle_ms"`
		APIKeys    []int16 `json:"api_keys"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	if j.ThrottleMs <= 0 {
		return nil, badRequest("throttle_ms must be positive")
	}
	return b.addFaultAnswer(Fault{Keys: j.APIKeys, ThrottleMillis: j.ThrottleMs})
}

func adminRTT(b *Broker, r *http.Request) (any, error) {
	var j struct {
		RTTMs      float64 `json:"rtt_ms"`
		Connection uint64  `json:"connection"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	d, err := millis("rtt_ms", j.RTTMs)
	if err != nil {
		return nil, err
	}
	if d <= 0 {
		return nil, badRequest("rtt_ms must be positive")
	}
	id, err := b.SetRTT(d, j.Connection)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return b.faultAnswer(id)
}

func adminBrokerState(b *Broker, _ *http.Request) (any, error) {
	return map[string]any{"down": b.IsDown()}, nil
}

func adminBrokerDown(b *Broker, _ *http.Request) (any, error) {
	b.Down()
	return map[string]any{"down": true}, nil
}

func adminBrokerUp(b *Broker, _ *http.Request) (any, error) {
	if err := b.Up(); err != nil {
		return nil, err
	}
	return map[string]any{"down": false}, nil
}

type requestJSON struct {
	Time       time.Time `json:"time"`
	APIKey     int16     `json:"api_key"`
	API        string    `json:"api"`
	Version    int16     `json:"version"`
	ClientID   string    `json:"client_id"`
	Connection uint64    `json:"connection"`
	Listener   string    `json:"listener,omitempty"`
	Remote     string    `json:"remote,omitempty"`
	LatencyMs  float64   `json:"latency_ms"`
	ErrorCode  int16     `json:"error_code"`
	Error      string    `json:"error,omitempty"`
	Closed     bool      `json:"closed,omitempty"`
	NoAnswer   bool      `json:"no_answer,omitempty"`
}

func adminRequests(b *Broker, r *http.Request) (any, error) {
	limit := 0
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, badRequest("limit %q is not a positive integer", s)
		}
		limit = n
	}
	var apiKey = -1
	if s := r.URL.Query().Get("api_key"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > math.MaxInt16 {
			return nil, badRequest("api_key %q is not an API key", s)
		}
		apiKey = n
	}
	log := b.RequestLog()
	out := []requestJSON{}
	for _, e := range log {
		if apiKey >= 0 && int(e.Key) != apiKey {
			continue
		}
		j := requestJSON{Time: e.Time, APIKey: e.Key, API: kmsg.NameForKey(e.Key), Version: e.Version,
			ClientID: e.ClientID, Connection: e.ConnID, Listener: e.Listener, Remote: e.Remote,
			LatencyMs: float64(e.Latency) / float64(time.Millisecond), ErrorCode: e.ErrorCode,
			Closed: e.Closed, NoAnswer: e.NoAnswer}
		if e.ErrorCode != 0 {
			j.Error = broker.KafkaErrorName(e.ErrorCode)
		}
		out = append(out, j)
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return map[string]any{"requests": out}, nil
}

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

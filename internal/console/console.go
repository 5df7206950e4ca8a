// Package console is minikafka's web console: a JSON API under /api/ and
// the pages that use it (plain HTML, CSS and JS embedded with go:embed; no
// CDN, no build step). The minikafka package serves it on the listener of
// WithHTTPAddr; its API is for that package and may change.
//
// The console is a Kafka client of the broker it runs in: every question
// goes to the broker as a Kafka request (through kadm and kgo) over a
// connection that Config.Dial opens in-process. That way the console uses
// exactly the paths every client uses (no hooks in produce or fetch), and it
// works the same when the broker's listeners require TLS or SASL: the
// in-process connection is trusted, as the embedding program's own requests
// are. What Kafka cannot tell (uptime, listeners, counters, forwarding) comes
// from Config.Broker.
//
// The console must not slow the broker down: each API request runs under a
// timeout, request bodies are capped, a page of records reads a bounded
// number of bytes, and at most a few API requests run at once (more are
// refused with 503 rather than queued).
package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker/uplink"
)

//go:embed assets
var assets embed.FS

// Limits on the work one API request may cause.
const (
	maxBodyBytes   = 1 << 20          // a produced record or a config change fits easily
	requestTimeout = 10 * time.Second // every Kafka call an API request makes
	maxConcurrent  = 8                // API requests served at once; more get 503
)

// Broker is what the console reads directly from the broker it runs in.
type Broker interface {
	// Info is a snapshot of the broker's identity and counters.
	Info() Info
	// ForwardStats is the state of every forwarded partition (nil
	// without forwarding).
	ForwardStats() []uplink.ForwardStat
	// ForwardGroupOffsets is the last consumer group offset sync pass
	// (nil when it is off or has not run).
	ForwardGroupOffsets() []uplink.GroupOffsetSync
}

// Info describes the running broker.
type Info struct {
	NodeID    int32      `json:"node_id"`
	ClusterID string     `json:"cluster_id"`
	Listeners []Listener `json:"listeners"`
	Started   time.Time  `json:"started"`
	// DataDir is the data directory on the OS filesystem, "" in memory
	// or on another filesystem.
	DataDir string `json:"data_dir"`
	// Counters since start, for the rate charts.
	ProduceRequests uint64 `json:"produce_requests"`
	FetchRequests   uint64 `json:"fetch_requests"`
	ProduceBytes    uint64 `json:"produce_bytes"`
	FetchBytes      uint64 `json:"fetch_bytes"`
	Connections     int    `json:"connections"`
	// Nodes are the nodes of a simulated cluster (one otherwise), with
	// the stopped ones Metadata leaves out.
	Nodes []Node `json:"nodes"`
}

// Node is a node of the broker's (simulated) cluster.
type Node struct {
	ID   int32  `json:"id"`
	Rack string `json:"rack,omitempty"`
	Up   bool   `json:"up"`
	Addr string `json:"addr"`
}

// Listener is one of the broker's Kafka listeners.
type Listener struct {
	Name       string `json:"name"`
	Security   string `json:"security"`
	Addr       string `json:"addr"`
	Advertised string `json:"advertised"`
}

// Config is what New needs.
type Config struct {
	Broker Broker
	// Dial opens a Kafka connection to the broker that needs no TLS or
	// SASL (an in-process pipe).
	Dial   func(ctx context.Context) (net.Conn, error)
	Logger *slog.Logger
	// Schemas is the broker's schema registry; nil when it is off.
	Schemas Schemas
}

// Console serves the API and the pages.
type Console struct {
	cfg  Config
	cl   *kgo.Client
	adm  *kadm.Client
	mux  *http.ServeMux
	slot chan struct{} // one token per API request in progress
	log  *slog.Logger

	sizeMu   sync.Mutex // guards the cached data dir size
	sizeAt   time.Time
	sizeVal  int64
	sizeFile int
}

// New makes a console; Close releases its Kafka client.
func New(cfg Config) (*Console, error) {
	if cfg.Broker == nil || cfg.Dial == nil {
		return nil, errors.New("console: Broker and Dial are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cl, err := kgo.NewClient(
		// Every address the broker advertises leads to the same pipe.
		kgo.SeedBrokers("console.internal:9092"),
		kgo.Dialer(func(ctx context.Context, _, _ string) (net.Conn, error) { return cfg.Dial(ctx) }),
		kgo.ClientID("minikafka-console"),
		kgo.RequestRetries(2),
		kgo.RetryTimeout(requestTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.MetadataMinAge(250*time.Millisecond),
	)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c := &Console{cfg: cfg, cl: cl, adm: kadm.NewClient(cl), slot: make(chan struct{}, maxConcurrent), log: log}
	c.routes()
	return c, nil
}

// Close closes the console's Kafka client.
func (c *Console) Close() { c.cl.Close() }

func (c *Console) routes() {
	mux := http.NewServeMux()
	api := func(pattern string, h func(*http.Request) (any, error)) {
		mux.Handle(pattern, c.apiHandler(h))
	}
	api("GET /api/overview", c.overview)
	api("GET /api/topics", c.listTopics)
	api("POST /api/topics", c.createTopic)
	api("GET /api/topics/{topic}", c.describeTopic)
	api("DELETE /api/topics/{topic}", c.deleteTopic)
	api("PATCH /api/topics/{topic}/configs", c.alterConfigs)
	api("GET /api/topics/{topic}/records", c.browse)
	api("POST /api/topics/{topic}/records", c.produce)
	api("GET /api/groups", c.listGroups)
	api("GET /api/groups/{group}", c.describeGroup)
	api("POST /api/groups/{group}/reset", c.resetGroup)
	api("GET /api/cluster", c.cluster)
	api("GET /api/acls", c.acls)
	api("GET /api/quotas", c.quotas)
	api("GET /api/transactions", c.transactions)
	api("GET /api/scram", c.scramUsers)
	api("PUT /api/scram/{user}", c.setScramUser)
	api("DELETE /api/scram/{user}", c.deleteScramUser)
	api("GET /api/forwarding", c.forwarding)
	api("GET /api/forwarding/groups", c.forwardingGroups)
	api("GET /api/schemas", c.listSchemas)
	api("GET /api/schemas/ids/{id}", c.schemaByID)
	mux.Handle("/api/", c.apiHandler(func(r *http.Request) (any, error) {
		return nil, errorf(http.StatusNotFound, "no such API endpoint: %s %s", r.Method, r.URL.Path)
	}))
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// The pages are one document; the fragment picks the page.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	}))
	c.mux = mux
}

// ServeHTTP serves the API and the pages. Cross-origin writes are refused
// (a page on another site must not drive a console on localhost).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := http.NewCrossOriginProtection().Check(r); err != nil {
		writeJSON(w, http.StatusForbidden, apiError{Error: "cross-origin request refused"})
		return
	}
	c.mux.ServeHTTP(w, r)
}

// httpError is an error with the HTTP status to answer it with.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &httpError{status, fmt.Sprintf(format, args...)}
}

// created makes apiHandler answer 201 with v.
type created struct{ v any }

type apiError struct {
	Error string `json:"error"`
}

// apiHandler runs h under the concurrency bound and a timeout, caps the
// body and writes h's result or error as JSON.
func (c *Console) apiHandler(h func(*http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case c.slot <- struct{}{}:
			defer func() { <-c.slot }()
		default:
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "console busy: too many requests at once"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		v, err := h(r)
		if err != nil {
			status, msg := statusOf(err)
			if status >= 500 {
				c.log.Warn("console API request failed", "path", r.URL.Path, "err", err)
			}
			writeJSON(w, status, apiError{Error: msg})
			return
		}
		if cr, ok := v.(created); ok {
			writeJSON(w, http.StatusCreated, cr.v)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

// statusOf maps an error to an HTTP status: the user's mistakes (a bad
// value, a missing topic or group) are 4xx; the broker failing is 502,
// taking too long 504.
func statusOf(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.UnknownTopicOrPartition, kerr.UnknownTopicID:
			return http.StatusNotFound, "the topic or partition does not exist (" + err.Error() + ")"
		case kerr.GroupIDNotFound, kerr.ResourceNotFound,
			kerr.TransactionalIDNotFound:
			return http.StatusNotFound, err.Error()
		case kerr.TopicAlreadyExists, kerr.NonEmptyGroup, kerr.UnknownMemberID, kerr.IllegalGeneration,
			kerr.RebalanceInProgress:
			return http.StatusConflict, err.Error()
		case kerr.InvalidTopicException, kerr.InvalidPartitions, kerr.InvalidReplicationFactor, kerr.InvalidConfig,
			kerr.InvalidRequest, kerr.PolicyViolation, kerr.InvalidRecord, kerr.MessageTooLarge, kerr.RecordListTooLarge,
			kerr.InvalidTimestamp, kerr.InvalidGroupID, kerr.OffsetOutOfRange, kerr.InvalidRequiredAcks:
			return http.StatusBadRequest, err.Error()
		}
		return http.StatusBadGateway, err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout, "the broker did not answer in time"
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit)
	}
	return http.StatusBadGateway, err.Error()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v) // the client may have gone
}

// readJSON decodes the request body into v, refusing unknown fields so a
// typo is an error rather than ignored.
func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errorf(http.StatusBadRequest, "request body: %v", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "request body: more than one JSON value")
	}
	return nil
}

// dataDirSize sums the file sizes under dir, at most every 10 s (a walk
// of a large data dir is not free) and over at most 100000 files.
func (c *Console) dataDirSize(dir string) (int64, int) {
	c.sizeMu.Lock()
	defer c.sizeMu.Unlock()
	if time.Since(c.sizeAt) < 10*time.Second {
		return c.sizeVal, c.sizeFile
	}
	var total int64
	files := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if files++; files > 100000 {
			return filepath.SkipAll
		}
		if fi, err := d.Info(); err == nil {
			total += fi.Size()
		}
		return nil
	})
	c.sizeAt, c.sizeVal, c.sizeFile = time.Now(), total, files
	return total, files
}

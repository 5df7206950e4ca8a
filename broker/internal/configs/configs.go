package configs

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/broker/internal/telemetry"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

// Broker is what the config resources need of the broker around them.
type Broker interface {
	// TopicConfig is a topic's current config; false when there is no
	// such topic.
	TopicConfig(name string) (*topicconfig.Config, bool)
	// TopicNames lists every topic.
	TopicNames() []string
	// WriteTopicConfig persists a topic's explicitly set configs.
	WriteTopicConfig(name string, set map[string]string) error
	// ApplyTopicConfig makes cfg a topic's config and hands its log
	// settings to the topic's partitions.
	ApplyTopicConfig(name string, cfg *topicconfig.Config)
	// Settings is what the broker runs with, for the BROKER resource.
	Settings() Settings
	// GroupConfigs, SetGroupConfigs and ValidateShareConfig are the
	// share coordinator's, which stores every GROUP resource config and
	// knows the share.* ones.
	GroupConfigs(group string) map[string]string
	SetGroupConfigs(group string, set map[string]string) error
	ValidateShareConfig(name, value string) error
}

// Nodes are the cluster's node IDs (a simulated cluster's nodes share one
// configuration).
type Nodes interface {
	// Index is a node's position, -1 when id is no node's.
	Index(id int32) int
	// IDsText lists the node IDs as Kafka's messages print them.
	IDsText() string
}

// RuleSink is the telemetry registry, which matches clients against the
// client-metrics subscriptions.
type RuleSink interface {
	SetRules([]telemetry.Rule)
}

// GroupBounds are the group coordinator's KIP-848 settings, resolved: the
// defaults of the consumer.* GROUP configs and the bounds they must keep.
type GroupBounds struct {
	SessionTimeout, MinSessionTimeout, MaxSessionTimeout          time.Duration
	HeartbeatInterval, MinHeartbeatInterval, MaxHeartbeatInterval time.Duration
}

// Config is the manager's settings.
type Config struct {
	FS     vfs.FS
	Dir    string // the data dir, where DynamicFile and ClientMetricsFile live
	Logger *slog.Logger
	Nodes  Nodes
	// Telemetry receives the client-metrics subscriptions as rules.
	Telemetry RuleSink
	// ErrCode is the Kafka code of a failed write (the broker's one
	// place for that mapping).
	ErrCode func(error) int16
	// ShareDefaults are the share.* GROUP configs with their defaults.
	ShareDefaults map[string]string
	Groups        GroupBounds
}

// Manager holds the dynamic broker configs and the client-metrics
// subscriptions, and describes and alters every config resource.
type Manager struct {
	cfg  Config
	b    Broker
	dyn  brokerconfig.Current
	subs atomic.Pointer[subscriptions]
}

// New returns a manager with no dynamic configs and no subscriptions;
// LoadDynamic and LoadClientMetrics read the persisted ones.
func New(cfg Config, b Broker) *Manager {
	return &Manager{cfg: cfg, b: b}
}

// codedError carries the Kafka error code a validation failure answers.
type codedError struct {
	code int16
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// codeOr is err's own code, else def.
func codeOr(err error, def int16) int16 {
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	return def
}

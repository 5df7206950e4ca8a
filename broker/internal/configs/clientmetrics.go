package configs

// Client-metrics subscriptions: the CLIENT_METRICS config resource (type
// 16, KIP-714). Each named resource is one subscription with Kafka's three
// configs: metrics (a list of metric name prefixes, "*" for all), interval.ms
// (the push interval, 100 ms to an hour, default 5 minutes) and match (a
// list of param=regex, every one of which must match a client in full:
// client_instance_id, client_id, client_software_name,
// client_software_version, client_source_address, client_source_port).
// They are validated as Kafka validates them, with its messages, kept in
// ClientMetricsFile in the data dir (replaced whole, atomically) and handed
// to the telemetry registry, whose GetTelemetrySubscriptions gives each
// client the union of the subscriptions that match it. Deleting every
// config of a subscription removes it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/telemetry"
	"github.com/minikafka/minikafka/internal/vfs"
)

// ClientMetricsFile holds the subscriptions in the data dir.
const ClientMetricsFile = "client_metrics.json"

// Kafka's ClientMetricsConfigs names and bounds.
const (
	cmMetrics         = "metrics"
	cmInterval        = "interval.ms"
	cmMatch           = "match"
	cmIntervalDefault = 300000
	cmIntervalMin     = 100
	cmIntervalMax     = 3600000
)

var cmMatchParams = []string{"client_instance_id", "client_id", "client_software_name", "client_software_version", "client_source_address", "client_source_port"}

// subscriptions is every subscription's configs by name, as set.
type subscriptions map[string]map[string]string

func (m *Manager) clientMetricsPath() string { return path.Join(m.cfg.Dir, ClientMetricsFile) }

// LoadClientMetrics reads the persisted subscriptions (none when the file
// is missing) and hands them to the telemetry registry.
func (m *Manager) LoadClientMetrics() error {
	set := subscriptions{}
	data, err := vfs.ReadFile(m.cfg.FS, m.clientMetricsPath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("broker: reading %s: %w", ClientMetricsFile, err)
	default:
		if err := json.Unmarshal(data, &set); err != nil {
			return fmt.Errorf("broker: %s is corrupt: %w", ClientMetricsFile, err)
		}
	}
	for name, cfg := range set {
		if _, err := validateClientMetrics(name, cfg); err != nil {
			return fmt.Errorf("broker: %s: subscription %s: %w", ClientMetricsFile, name, err)
		}
	}
	m.subs.Store(&set)
	m.cfg.Telemetry.SetRules(clientMetricsRules(set))
	return nil
}

// clientMetrics returns the current subscriptions (never nil).
func (m *Manager) clientMetrics() subscriptions {
	if p := m.subs.Load(); p != nil {
		return *p
	}
	return subscriptions{}
}

// ClientMetricsNames lists the subscriptions by name.
func (m *Manager) ClientMetricsNames() []string {
	return slices.Sorted(maps.Keys(m.clientMetrics()))
}

func clientMetricsRules(set subscriptions) []telemetry.Rule {
	var rules []telemetry.Rule
	for _, name := range slices.Sorted(maps.Keys(set)) {
		ru, _ := validateClientMetrics(name, set[name])
		rules = append(rules, ru)
	}
	return rules
}

// validateClientMetrics checks one subscription's whole config set as
// Kafka's ClientMetricsConfigs.validate does, returning it as a rule. The
// error carries Kafka's code.
func validateClientMetrics(name string, cfg map[string]string) (telemetry.Rule, error) {
	ru := telemetry.Rule{Name: name, Interval: cmIntervalDefault * time.Millisecond}
	if name == "" {
		return ru, &codedError{kerr.InvalidRequest.Code, errors.New("Subscription name can't be empty")}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if k != cmMetrics && k != cmInterval && k != cmMatch {
			return ru, &codedError{kerr.InvalidRequest.Code, fmt.Errorf("Unknown client metrics configuration: %s", k)}
		}
	}
	// ConfigDef's parse: the lists without duplicates, the interval an int.
	ru.Metrics = cmList(cmMetrics, cfg)
	patterns := cmList(cmMatch, cfg)
	if v, ok := cfg[cmInterval]; ok {
		n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if perr != nil {
			return ru, &codedError{kerr.InvalidConfig.Code, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type INT", v, cmInterval)}
		}
		if n < cmIntervalMin || n > cmIntervalMax {
			return ru, &codedError{kerr.InvalidRequest.Code, fmt.Errorf("Invalid value %d for %s, interval must be between 100 and 3600000 (1 hour)", n, cmInterval)}
		}
		ru.Interval = time.Duration(n) * time.Millisecond
	}
	for _, p := range patterns {
		parts := strings.Split(p, "=")
		for len(parts) > 0 && parts[len(parts)-1] == "" { // Java's split drops trailing empties
			parts = parts[:len(parts)-1]
		}
		illegal := &codedError{kerr.InvalidConfig.Code, fmt.Errorf("Illegal client matching pattern: %s", p)}
		if len(parts) != 2 || !slices.Contains(cmMatchParams, strings.TrimSpace(parts[0])) {
			return ru, illegal
		}
		re, rerr := regexp.Compile(`^(?:` + strings.TrimSpace(parts[1]) + `)$`)
		if rerr != nil {
			return ru, illegal
		}
		if ru.Match == nil {
			ru.Match = map[string]*regexp.Regexp{}
		}
		ru.Match[strings.TrimSpace(parts[0])] = re
	}
	return ru, nil
}

// cmList parses a list config: comma-separated, trimmed, empty allowed,
// a repeated item kept once (Kafka 4.4 stores "a,a" as "a").
func cmList(name string, cfg map[string]string) []string {
	v, ok := cfg[name]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// alterClientMetrics computes a subscription's new set with change,
// validates, persists and applies it.
func (m *Manager) alterClientMetrics(name string, dup, validateOnly bool, change func(cur map[string]string) (map[string]string, error)) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, fmt.Errorf("resource %s named more than once", name)
	}
	subs := m.clientMetrics()
	next, err := change(maps.Clone(subs[name]))
	if err != nil {
		return codeOr(err, kerr.InvalidConfig.Code), err
	}
	if _, err := validateClientMetrics(name, next); err != nil {
		return codeOr(err, kerr.InvalidConfig.Code), err
	}
	for _, k := range []string{cmMetrics, cmMatch} {
		if _, ok := next[k]; ok {
			next[k] = strings.Join(cmList(k, next), ",")
		}
	}
	if validateOnly {
		return 0, nil
	}
	all := maps.Clone(subs)
	if len(next) == 0 {
		delete(all, name)
	} else {
		all[name] = next
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return kerr.UnknownServerError.Code, err
	}
	if err := vfs.WriteFileAtomic(m.cfg.FS, m.clientMetricsPath(), data, 0o600); err != nil {
		m.cfg.Logger.Error("persisting client metrics subscriptions", "err", err)
		return m.cfg.ErrCode(err), err
	}
	m.subs.Store(&all)
	m.cfg.Telemetry.SetRules(clientMetricsRules(all))
	m.cfg.Logger.Info("altered client metrics subscription", "name", name, "configs", next)
	return 0, nil
}

// applyClientMetricsOps applies IncrementalAlterConfigs ops to a
// subscription: SET and DELETE; APPEND and SUBTRACT are refused, as
// Kafka's controller refuses them here.
func applyClientMetricsOps(set map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	if set == nil {
		set = map[string]string{}
	}
	for _, c := range ops {
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return nil, &codedError{kerr.InvalidRequest.Code, fmt.Errorf("Null value not supported for : %s", c.Name)}
			}
			set[c.Name] = *c.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(set, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			// Kafka's controller knows no types for this resource, so
			// it treats every key, the two lists too, as not a list.
			op := "APPEND"
			if c.Op == kmsg.IncrementalAlterConfigOpSubtract {
				op = "SUBTRACT"
			}
			return nil, &codedError{kerr.InvalidConfig.Code, fmt.Errorf("Can't %s to key %s because its type is not LIST.", op, c.Name)}
		default:
			return nil, &codedError{kerr.InvalidRequest.Code, fmt.Errorf("invalid op %d for config %s", c.Op, c.Name)}
		}
	}
	return set, nil
}

// describeClientMetrics is a subscription's three configs: those set with
// source CLIENT_METRICS_CONFIG, the others at Kafka's defaults.
func (m *Manager) describeClientMetrics(name string, names []string, synonyms bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if name == "" {
		return []kmsg.DescribeConfigsResponseResourceConfig{}, errors.New("Client metrics subscription name must not be empty")
	}
	want := Wanted(names)
	set := m.clientMetrics()[name]
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, d := range []struct {
		name, def string
		typ       kmsg.ConfigType
	}{{cmInterval, strconv.Itoa(cmIntervalDefault), kmsg.ConfigTypeInt}, {cmMatch, "", kmsg.ConfigTypeList}, {cmMetrics, "", kmsg.ConfigTypeList}} {
		if !want(d.name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = d.name
		if v, ok := set[d.name]; ok {
			c.Value, c.Source = kmsg.StringPtr(v), kmsg.ConfigSourceClientMetricsConfig
			if synonyms {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.name, v, int8(kmsg.ConfigSourceClientMetricsConfig)))
			}
		} else {
			c.Value, c.Source, c.IsDefault = kmsg.StringPtr(d.def), kmsg.ConfigSourceDefaultConfig, true
		}
		c.ConfigType = d.typ
		out = append(out, c)
	}
	return out, nil
}

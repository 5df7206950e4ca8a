package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestGroupFlags(t *testing.T) {
	env := map[string]string{
		"MINIKAFKA_OFFSETS_RETENTION":                 "48h",
		"MINIKAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL": "250ms",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{"-group-min-session-timeout", "1s", "-offsets-retention-check-interval", "1m"}, lookup, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	want := groupSettings{offsetsRetention: 48 * time.Hour, retentionCheck: time.Minute, minSession: time.Second,
		maxSession: 30 * time.Minute, consumerSession: 45 * time.Second, consumerHB: 250 * time.Millisecond,
		shareMinLock: 15 * time.Second, consumerMaxSize: 1<<31 - 1}
	if s.groups != want {
		t.Fatalf("group settings %+v, want %+v", s.groups, want)
	}
	if len(s.groups.options()) != 8 {
		t.Fatal("not every setting becomes an option")
	}

	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-offsets-retention", "0s"}, "-offsets-retention: must be positive"},
		{[]string{"-group-min-session-timeout", "1h", "-group-max-session-timeout", "30m"}, "must not be above -group-max-session-timeout"},
		{[]string{"-group-consumer-heartbeat-interval", "45s"}, "must be below -group-consumer-session-timeout"},
		{[]string{"-group-consumer-max-size", "0"}, "-group-consumer-max-size: must be between 1 and 2147483647"},
	} {
		stderr.Reset()
		if _, err := parseSettings(c.args, none, &stderr); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: err %v, stderr %q, want %q", c.args, err, stderr.String(), c.want)
		}
	}
}

// TestRunGroupSettings runs the binary's main in process with group flags
// and reads them back with DescribeConfigs.
func TestRunGroupSettings(t *testing.T) {
	b := runStarted(t, map[string]string{"MINIKAFKA_GROUP_MAX_SESSION_TIMEOUT": "2m"}, "-offsets-retention", "90m")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	rcs, err := kadm.NewClient(cl).DescribeBrokerConfigs(rctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("0", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range rc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	if got["offsets.retention.minutes"] != "90" || got["group.max.session.timeout.ms"] != "120000" || got["group.min.session.timeout.ms"] != "6000" {
		t.Fatalf("described: retention %q, max session %q, min session %q", got["offsets.retention.minutes"], got["group.max.session.timeout.ms"], got["group.min.session.timeout.ms"])
	}
}

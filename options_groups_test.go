package minikafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOffsetsRetentionExpires: with WithOffsetsRetention the committed
// offsets of a group without members disappear once the retention has
// passed, found by the check every WithOffsetsRetentionCheckInterval.
func TestOffsetsRetentionExpires(t *testing.T) {
	const retention = time.Second
	b, err := Start(context.Background(), WithInMemory(), WithTopic("t", 1),
		WithOffsetsRetention(retention), WithOffsetsRetentionCheckInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 7, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := adm.FetchOffsets(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := got.Lookup("t", 0)
		if !ok || o.At < 0 {
			break
		}
		if o.At != 7 {
			t.Fatalf("committed 7, fetched %d", o.At)
		}
		if ctx.Err() != nil {
			t.Fatal("offsets outlived the retention")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); took < retention {
		t.Fatalf("offsets gone after %v, before the %v retention", took, retention)
	}
}

func TestGroupOptionsValidated(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithOffsetsRetention(-time.Second)}, "offsets retention -1s: must be >= 0"},
		{[]Option{WithGroupMinSessionTimeout(time.Hour)}, "group min session timeout 1h0m0s is above the max 30m0s"},
		{[]Option{WithGroupConsumerHeartbeatInterval(time.Minute)}, "heartbeat interval 1m0s must be below the consumer session timeout 45s"},
		{[]Option{WithGroupMaxSessionTimeout(30 * 24 * time.Hour)}, "group max session timeout 720h0m0s: must be between"},
		{[]Option{WithGroupConsumerSessionTimeoutBounds(50*time.Second, time.Minute)}, "group consumer session timeout 45s is outside its bounds [50s, 1m0s]"},
		{[]Option{WithGroupConsumerHeartbeatIntervalBounds(0, 4*time.Second)}, "group consumer heartbeat interval 5s is outside its bounds [0s, 4s]"},
		{[]Option{WithGroupConsumerHeartbeatIntervalBounds(-time.Second, 0)}, "group consumer min heartbeat interval -1s: must be >= 0"},
	} {
		b, err := Start(context.Background(), append([]Option{WithInMemory()}, c.opts...)...)
		if err == nil {
			b.Close()
			t.Errorf("%s: started", c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q, want %q", err, c.want)
		}
	}
}

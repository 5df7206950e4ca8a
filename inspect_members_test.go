package minikafka_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// Members and their assignments, for a classic group and a KIP-848 one:
// two kgo consumers on a 4-partition topic split it between them, and the
// control API shows the same.
func TestGroupMembers(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("m", 4), minikafka.WithGroupInitialRebalanceDelay(0), minikafka.WithAdminAddr("127.0.0.1:0"))
	ctx := context.Background()
	for _, kind := range []string{"classic", "consumer"} {
		t.Run(kind, func(t *testing.T) {
			group := "members-" + kind
			opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics("m"), kgo.ClientID("c-" + kind)}
			if kind == "consumer" {
				opts = append(opts, kgo.ServerSideBalancer())
			}
			for range 2 {
				cl := minikafkatest.Client(t, b, opts...)
				go func() {
					for cl.Context().Err() == nil {
						cl.PollFetches(cl.Context())
					}
				}()
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := b.WaitGroupStable(wctx, group, 2); err != nil {
				t.Fatal(err)
			}
			var ms []minikafka.GroupMember
			deadline := time.Now().Add(20 * time.Second)
			for {
				var err error
				if ms, err = b.GroupMembers(ctx, group); err != nil {
					t.Fatal(err)
				}
				var all []int32
				for _, m := range ms {
					all = append(all, m.Assignment["m"]...)
				}
				sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
				if len(ms) == 2 && fmt.Sprint(all) == "[0 1 2 3]" && len(ms[0].Assignment["m"]) == 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("members %+v", ms)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if ms[0].ClientID != "c-"+kind || ms[0].MemberID == "" || ms[0].ClientHost == "" {
				t.Fatalf("member %+v", ms[0])
			}
			st, m := adminCall(t, "GET", "http://"+b.AdminAddr().String()+"/v1/groups/"+group, "")
			if st != 200 || len(m["member_list"].([]any)) != 2 {
				t.Fatalf("HTTP group: %d %v", st, m)
			}
		})
	}
	if ms, err := b.GroupMembers(ctx, "nobody"); err != nil || len(ms) != 0 {
		t.Fatalf("unknown group: %v %v", ms, err)
	}
}

package broker

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// BenchmarkDispatchFaultHook is Serve of one ApiVersions request with no
// fault (the hook's cost: one atomic load), with a fault that does not
// match, and with the request log on.
//
//	go test -run '^$' -bench BenchmarkDispatchFaultHook -benchmem ./broker/
func BenchmarkDispatchFaultHook(b *testing.B) {
	br := newTestBroker(b)
	body := kmsg.NewPtrApiVersionsRequest()
	body.Version = 3
	body.ClientSoftwareName, body.ClientSoftwareVersion = "bench", "1"
	cid := "bench"
	req := &protocol.Request{Key: 18, Version: 3, ClientID: &cid, Body: body, Conn: &protocol.ConnInfo{ID: 1}}
	ctx := context.Background()
	run := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := br.Serve(ctx, req)
			if r.Response == nil {
				b.Fatal("no answer")
			}
		}
	}
	b.Run("none", run)
	b.Run("nonmatching-fault", func(b *testing.B) {
		id, err := br.AddFault(Fault{Keys: []int16{0}, ErrorCode: 6})
		if err != nil {
			b.Fatal(err)
		}
		defer br.RemoveFault(id)
		run(b)
	})
	b.Run("request-log", func(b *testing.B) {
		br.EnableRequestLog(1024)
		defer br.EnableRequestLog(0)
		run(b)
	})
}

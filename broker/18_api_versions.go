package broker

// ApiVersions v0–v4.
//
// Answers the API table. A version newer than ours (or one kmsg could not
// decode; protocol then hands us an empty v<N> request) gets what Kafka
// sends since KIP-511: a v0 response with UNSUPPORTED_VERSION listing only
// the ApiVersions range, so the client retries with a version we speak.
// v3+: the client software name and version must match Kafka's pattern,
// else INVALID_REQUEST (as Kafka's ApiVersionsRequest.isValid).

import (
	"context"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/features"
	"github.com/minikafka/minikafka/protocol"
)

var softwareNameRE = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

func (b *Broker) handleApiVersions(_ context.Context, req *protocol.Request) protocol.Reply {
	a := lookupAPI(18)
	resp := kmsg.NewPtrApiVersionsResponse()
	if req.Version > a.max || req.Version < a.min {
		resp.Version = 0
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = 18, a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
		// Clients probe with their newest version; routine.
		b.logRoutine(req, "unsupported ApiVersions version", "max", a.max)
		return protocol.Reply{Response: resp}
	}
	resp.Version = req.Version
	r, _ := req.Body.(*kmsg.ApiVersionsRequest)
	if r != nil && req.Version >= 3 && (!softwareNameRE.MatchString(r.ClientSoftwareName) || !softwareNameRE.MatchString(r.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.logBad(req, "invalid client software name or version", "name", r.ClientSoftwareName, "version", r.ClientSoftwareVersion)
	} else if r != nil && req.Version >= 3 && req.Conn != nil {
		// Kept for the client metrics (KIP-714) it later pushes.
		req.Conn.ClientSoftwareName, req.Conn.ClientSoftwareVersion = r.ClientSoftwareName, r.ClientSoftwareVersion
	}
	// Kafka lists the keys even alongside INVALID_REQUEST.
	resp.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for _, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	if req.Version >= 3 {
		features.AddTo(resp, b.txns)
	}
	return protocol.Reply{Response: resp}
}

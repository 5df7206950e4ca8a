package compat_test

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// dtokenDiffRows are TestKafkaDiff's rows for delegation tokens (keys
// 38-41). Both brokers serve PLAINTEXT here, so every one of them is
// Kafka's allowTokenRequests refusal: the code, the -1 timestamps and the
// principals a refused CreateDelegationToken echoes.
func dtokenDiffRows() []diffRow {
	createOut := func(_ *diffSide, r kmsg.Response) any {
		c := r.(*kmsg.CreateDelegationTokenResponse)
		return map[string]any{"err": errName(c.ErrorCode), "owner": c.PrincipalType + ":" + c.PrincipalName,
			"requester": c.TokenRequesterPrincipalType + ":" + c.TokenRequesterPrincipalName,
			"issue": c.IssueTimestamp, "expiry": c.ExpiryTimestamp, "max": c.MaxTimestamp, "id": c.TokenID, "hmac": len(c.HMAC)}
	}
	describeOut := func(_ *diffSide, r kmsg.Response) any {
		d := r.(*kmsg.DescribeDelegationTokenResponse)
		return map[string]any{"err": errName(d.ErrorCode), "tokens": len(d.TokenDetails)}
	}
	return []diffRow{
		{name: "CreateDelegationToken/plaintext", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrCreateDelegationTokenRequest()
			r.Version = 3
			return r
		}, out: createOut},
		{name: "CreateDelegationToken/plaintext for another owner", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrCreateDelegationTokenRequest()
			r.Version = 3
			r.OwnerPrincipalType, r.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("kd-owner")
			return r
		}, out: createOut},
		{name: "CreateDelegationToken/v1", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrCreateDelegationTokenRequest()
			r.Version, r.MaxLifetimeMillis = 1, 60_000
			return r
		}, out: createOut},
		{name: "RenewDelegationToken/plaintext", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrRenewDelegationTokenRequest()
			r.Version, r.HMAC, r.RenewTimeMillis = 2, []byte("kd-hmac"), -1
			return r
		}, out: func(_ *diffSide, r kmsg.Response) any {
			x := r.(*kmsg.RenewDelegationTokenResponse)
			return map[string]any{"err": errName(x.ErrorCode), "expiry": x.ExpiryTimestamp}
		}},
		{name: "ExpireDelegationToken/plaintext", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrExpireDelegationTokenRequest()
			r.Version, r.HMAC, r.ExpiryPeriodMillis = 2, []byte("kd-hmac"), -1
			return r
		}, out: func(_ *diffSide, r kmsg.Response) any {
			x := r.(*kmsg.ExpireDelegationTokenResponse)
			return map[string]any{"err": errName(x.ErrorCode), "expiry": x.ExpiryTimestamp}
		}},
		{name: "DescribeDelegationToken/plaintext all", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrDescribeDelegationTokenRequest()
			r.Version = 3
			return r
		}, out: describeOut},
		{name: "DescribeDelegationToken/plaintext empty owners", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrDescribeDelegationTokenRequest()
			r.Version, r.Owners = 3, []kmsg.DescribeDelegationTokenRequestOwner{}
			return r
		}, out: describeOut},
	}
}

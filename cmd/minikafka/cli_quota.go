package main

// minikafka quota describe|alter: client quotas (DescribeClientQuotas,
// AlterClientQuotas), by user, client ID or IP, as kafka-configs
// --entity-type users|clients|ips manages them. NAME "<default>" is the
// type's default entity (kafka-configs --entity-default).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	cliVerbs["quota"] = &cliVerb{summary: "Describes and changes client quotas (by user, client ID, IP).", sub: map[string]cliCommand{
		"describe": {"[-user NAME] [-client NAME] [-ip ADDR] [-strict]", "quotas of the entities matching the flags (all without flags); NAME <default> is the default entity", quotaDescribe},
		"alter":    {"[-user NAME] [-client NAME] [-ip ADDR] [-set key=value]... [-delete key]... [-validate]", "set or remove quotas (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate, connection_creation_rate)", quotaAlter},
	}}
}

const defaultEntity = "<default>"

// quotaEntityFlags are the entity flags both sub-verbs take.
type quotaEntityFlags struct{ user, client, ip *string }

func newQuotaEntityFlags(c *cliCmd) quotaEntityFlags {
	return quotaEntityFlags{
		user:   c.fs.String("user", "", "user `NAME` (<default>: the default user)"),
		client: c.fs.String("client", "", "client ID `NAME` (<default>: the default client ID)"),
		ip:     c.fs.String("ip", "", "client `ADDR` (<default>: the default IP)"),
	}
}

// given lists the entity components set, in Kafka's type names.
func (f quotaEntityFlags) given(c *cliCmd) kadm.ClientQuotaEntity {
	var out kadm.ClientQuotaEntity
	set := map[string]bool{}
	c.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, p := range []struct {
		flag, typ string
		v         *string
	}{{"user", "user", f.user}, {"client", "client-id", f.client}, {"ip", "ip", f.ip}} {
		if !set[p.flag] {
			continue
		}
		comp := kadm.ClientQuotaEntityComponent{Type: p.typ}
		if *p.v != defaultEntity {
			name := *p.v
			comp.Name = &name
		}
		out = append(out, comp)
	}
	return out
}

type quotaOut struct {
	Entity map[string]string  `json:"entity"`
	Values map[string]float64 `json:"values,omitempty"`
	Error  string             `json:"error,omitempty"`
}

func entityMap(e kadm.ClientQuotaEntity) map[string]string {
	m := map[string]string{}
	for _, c := range e {
		n := defaultEntity
		if c.Name != nil {
			n = *c.Name
		}
		m[c.Type] = n
	}
	return m
}

func entityString(e kadm.ClientQuotaEntity) string {
	parts := make([]string, 0, len(e))
	for _, c := range e {
		n := defaultEntity
		if c.Name != nil {
			n = *c.Name
		}
		parts = append(parts, c.Type+"="+n)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func formatQuota(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func quotaDescribe(c *cliCmd) func(context.Context) error {
	ef := newQuotaEntityFlags(c)
	strict := c.fs.Bool("strict", false, "only entities with exactly the given types")
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		var comps []kadm.DescribeClientQuotaComponent
		for _, e := range ef.given(c) {
			dc := kadm.DescribeClientQuotaComponent{Type: e.Type, MatchName: e.Name, MatchType: 0}
			if e.Name == nil {
				dc.MatchType = 1
			}
			comps = append(comps, dc)
		}
		qs, err := adm.DescribeClientQuotas(ctx, *strict, comps)
		if err != nil {
			return err
		}
		out := []quotaOut{}
		var rows [][]string
		sort.Slice(qs, func(i, j int) bool { return entityString(qs[i].Entity) < entityString(qs[j].Entity) })
		for _, q := range qs {
			o := quotaOut{Entity: entityMap(q.Entity), Values: map[string]float64{}}
			sort.Slice(q.Values, func(i, j int) bool { return q.Values[i].Key < q.Values[j].Key })
			for _, v := range q.Values {
				o.Values[v.Key] = v.Value
				rows = append(rows, []string{entityString(q.Entity), v.Key, formatQuota(v.Value)})
			}
			out = append(out, o)
		}
		return c.answer(out, []string{"ENTITY", "QUOTA", "VALUE"}, rows, nil)
	}
}

func quotaAlter(c *cliCmd) func(context.Context) error {
	ef := newQuotaEntityFlags(c)
	var sets, dels multiFlag
	c.fs.Var(&sets, "set", "quota `key=value` to set (repeatable)")
	c.fs.Var(&dels, "delete", "quota `key` to remove (repeatable)")
	validate := c.fs.Bool("validate", false, "only check the change (validate_only)")
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		ent := ef.given(c)
		if len(ent) == 0 {
			return usagef("give the entity: -user, -client or -ip")
		}
		if len(sets)+len(dels) == 0 {
			return usagef("nothing to change: give -set key=value or -delete key")
		}
		var ops []kadm.AlterClientQuotaOp
		for _, kv := range sets {
			k, v, ok := strings.Cut(kv, "=")
			f, perr := strconv.ParseFloat(v, 64)
			if !ok || k == "" || perr != nil {
				return usagef("-set %q: want key=number", kv)
			}
			ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Value: f})
		}
		for _, k := range dels {
			ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
		}
		entry := []kadm.AlterClientQuotaEntry{{Entity: ent, Ops: ops}}
		var res kadm.AlteredClientQuotas
		if *validate {
			res, err = adm.ValidateAlterClientQuotas(ctx, entry)
		} else {
			res, err = adm.AlterClientQuotas(ctx, entry)
		}
		if err != nil {
			return err
		}
		var out []quotaOut
		var rows [][]string
		var ok []bool
		var failed []error
		for _, r := range res {
			o := quotaOut{Entity: entityMap(r.Entity)}
			status := "OK"
			if *validate {
				status = "OK (validated only)"
			}
			if r.Err != nil {
				o.Error = r.Err.Error()
				var ke *kerr.Error
				if errors.As(r.Err, &ke) {
					o.Error = ke.Message // the code's name; the detail follows
				}
				if r.ErrMessage != "" {
					o.Error += ": " + r.ErrMessage
				}
				status = o.Error
				failed = append(failed, fmt.Errorf("quota %s: %s", entityString(r.Entity), o.Error))
			}
			out = append(out, o)
			rows = append(rows, []string{entityString(r.Entity), status})
			ok = append(ok, r.Err == nil)
		}
		return c.answerItems(out, []string{"ENTITY", "STATUS"}, rows, ok, failed)
	}
}

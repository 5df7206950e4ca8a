package main

// minikafka user list|create|delete: SCRAM credentials
// (DescribeUserScramCredentials, AlterUserScramCredentials), as
// kafka-configs --entity-type users --alter --add-config 'SCRAM-SHA-256=...'
// and rpk security user do.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	cliVerbs["user"] = &cliVerb{summary: "Lists, creates and deletes SCRAM users (SASL/SCRAM credentials the broker keeps).", sub: map[string]cliCommand{
		"list":   {"[USER...]", "users with their mechanisms and iterations", userList},
		"create": {"USER -password P [-mechanism SCRAM-SHA-256|SCRAM-SHA-512] [-iterations N]", "create a user, or set its password", userCreate},
		"delete": {"USER... [-mechanism M]", "delete users' credentials (every mechanism unless -mechanism)", userDelete},
	}}
}

func parseMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(s) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, usagef("-mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512", s)
}

// userErr names the user in a per-user error, with the broker's message.
func userErr(user string, err error, msg string) error {
	if errors.Is(err, kerr.ResourceNotFound) {
		return fmt.Errorf("user %s does not exist", user)
	}
	if msg != "" && !strings.Contains(err.Error(), msg) {
		return fmt.Errorf("user %s: %w: %s", user, err, msg)
	}
	return fmt.Errorf("user %s: %w", user, err)
}

func userList(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(0, -1, "user names or none")
		if err != nil {
			return err
		}
		ds, err := adm.DescribeUserSCRAMs(ctx, c.args...)
		if err != nil {
			return err
		}
		type cred struct {
			Mechanism  string `json:"mechanism"`
			Iterations int32  `json:"iterations"`
		}
		type user struct {
			User  string `json:"user"`
			Creds []cred `json:"credentials"`
		}
		out := []user{}
		var rows [][]string
		var failed []error
		for _, d := range ds.Sorted() {
			if d.Err != nil {
				failed = append(failed, userErr(d.User, d.Err, d.ErrMessage))
				continue
			}
			u := user{User: d.User, Creds: []cred{}}
			for _, ci := range d.CredInfos {
				u.Creds = append(u.Creds, cred{ci.Mechanism.String(), ci.Iterations})
				rows = append(rows, []string{d.User, ci.Mechanism.String(), strconv.Itoa(int(ci.Iterations))})
			}
			out = append(out, u)
		}
		return c.answer(out, []string{"USER", "MECHANISM", "ITERATIONS"}, rows, errors.Join(failed...))
	}
}

func userCreate(c *cliCmd) func(context.Context) error {
	pw, _ := c.env.lookupEnv("MINIKAFKA_USER_PASSWORD")
	password := c.fs.String("password", pw, "the user's password (env MINIKAFKA_USER_PASSWORD)")
	mech := c.fs.String("mechanism", "SCRAM-SHA-256", "SCRAM-SHA-256 or SCRAM-SHA-512")
	iterations := c.fs.Int("iterations", 8192, "PBKDF2 iterations (4096 to 16384)")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one user name"); err != nil {
			return err
		}
		m, err := parseMechanism(*mech)
		if err != nil {
			return err
		}
		if *password == "" {
			return usagef("-password: required (or MINIKAFKA_USER_PASSWORD)")
		}
		if *iterations < 4096 || *iterations > 16384 {
			return usagef("-iterations %d: want 4096 to 16384", *iterations)
		}
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		user := c.args[0]
		as, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: int32(*iterations), Password: *password}})
		if err != nil {
			return err
		}
		if a := as[user]; a.Err != nil {
			return userErr(user, a.Err, a.ErrMessage)
		}
		out := map[string]any{"user": user, "mechanism": m.String(), "iterations": *iterations}
		return c.answer(out, []string{"USER", "MECHANISM", "ITERATIONS"}, [][]string{{user, m.String(), strconv.Itoa(*iterations)}}, nil)
	}
}

func userDelete(c *cliCmd) func(context.Context) error {
	mech := c.fs.String("mechanism", "", "delete only this mechanism's credential (default: every one the user has)")
	return func(ctx context.Context) error {
		adm, err := c.admin(1, -1, "one or more user names")
		if err != nil {
			return err
		}
		var dels []kadm.DeleteSCRAM
		var failed []error
		failedDescribe := map[string]bool{} // users that could not be listed
		if *mech != "" {
			m, err := parseMechanism(*mech)
			if err != nil {
				return err
			}
			for _, u := range c.args {
				dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: m})
			}
		} else {
			ds, err := adm.DescribeUserSCRAMs(ctx, c.args...)
			if err != nil {
				return err
			}
			for _, u := range c.args {
				d := ds[u]
				if d.Err != nil {
					failedDescribe[u] = true
					failed = append(failed, userErr(u, d.Err, d.ErrMessage))
					continue
				}
				for _, ci := range d.CredInfos {
					dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: ci.Mechanism})
				}
			}
		}
		type status struct {
			User  string `json:"user"`
			Error string `json:"error,omitempty"`
		}
		out := []status{}
		var rows [][]string
		// Kafka refuses a request that changes one user twice, so a user's
		// mechanisms go in successive requests, one each.
		userFailed := map[string]bool{}
		for len(dels) > 0 {
			var round, later []kadm.DeleteSCRAM
			inRound := map[string]bool{}
			for _, d := range dels {
				switch {
				case userFailed[d.User]:
				case inRound[d.User]:
					later = append(later, d)
				default:
					inRound[d.User] = true
					round = append(round, d)
				}
			}
			dels = later
			if len(round) == 0 {
				break
			}
			as, err := adm.AlterUserSCRAMs(ctx, round, nil)
			if err != nil {
				return err
			}
			for _, a := range as.Sorted() {
				if a.Err != nil {
					userFailed[a.User] = true
					failed = append(failed, userErr(a.User, a.Err, a.ErrMessage))
					out = append(out, status{a.User, a.Err.Error()})
				}
			}
		}
		for _, u := range c.args {
			if _, described := failedDescribe[u]; described || userFailed[u] {
				continue
			}
			out = append(out, status{User: u})
			rows = append(rows, []string{u, "deleted"})
		}
		if c.json() {
			if err := c.printJSON(out); err != nil {
				return err
			}
		} else if len(rows) > 0 {
			c.table([]string{"USER", "STATUS"}, rows)
		}
		return errors.Join(failed...)
	}
}

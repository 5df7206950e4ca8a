package main

// minikafka schema list|get|register|check|delete: the schema registry's
// REST API (minikafka's -schema-registry-addr, or any Confluent-compatible
// registry), as rpk registry's verbs do, through franz-go's sr client.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minikafka/minikafka/internal/schemaregistry"
)

func init() {
	cliVerbs["schema"] = &cliVerb{summary: "Lists, gets, registers, checks and deletes schemas in a schema registry (-registry URL).", sub: map[string]cliCommand{
		"list":     {"[SUBJECT...]", "subjects with their versions and latest ID (every subject when none is named)", schemaList},
		"get":      {"SUBJECT [-version N|latest] | -id ID", "a schema by subject and version, or by ID", schemaGet},
		"register": {"SUBJECT -schema FILE [-type avro|protobuf|json]", "register a schema (the same schema gets its ID back)", schemaRegister},
		"check":    {"SUBJECT -schema FILE [-type T] [-version N|latest|all]", "whether a schema is compatible, and why not", schemaCheck},
		"delete":   {"SUBJECT [-version N] [-permanent]", "soft-delete a subject or a version; -permanent after a soft delete", schemaDelete},
	}}
}

// decodingWriter decodes registry-framed keys and values (a zero byte,
// then a schema ID the registry at url knows) to JSON before write prints
// them: consume -registry. Others, and those naming an ID the registry
// does not have (a zero byte by chance), are printed as they are; a
// framed one that does not decode is an error naming the record.
func decodingWriter(ctx context.Context, url string, write func(*kgo.Record) error) func(*kgo.Record) error {
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	dec := schemaregistry.NewDecoder(url, nil)
	decode := func(r *kgo.Record, what string, b []byte) ([]byte, error) {
		_, js, err := dec.Decode(ctx, b)
		switch {
		case errors.Is(err, schemaregistry.ErrNotFramed), errors.Is(err, schemaregistry.ErrUnknownSchema):
			return b, nil
		case err != nil:
			return nil, fmt.Errorf("%s/%d offset %d: decoding the %s: %w", r.Topic, r.Partition, r.Offset, what, err)
		}
		return js, nil
	}
	return func(r *kgo.Record) error {
		cp := *r
		var err error
		if cp.Key, err = decode(r, "key", r.Key); err != nil {
			return err
		}
		if cp.Value, err = decode(r, "value", r.Value); err != nil {
			return err
		}
		return write(&cp)
	}
}

// registryFlag registers -registry on c and returns what opens the client.
func (c *cliCmd) registryFlag() func() (*sr.Client, error) {
	def := "http://localhost:8081"
	if v, ok := c.env.lookupEnv("MINIKAFKA_SCHEMA_REGISTRY"); ok && v != "" {
		def = v
	}
	url := c.fs.String("registry", def, "schema registry `URL` (env MINIKAFKA_SCHEMA_REGISTRY)")
	return func() (*sr.Client, error) {
		for _, n := range kafkaConnFlags {
			if c.flagGiven(n) {
				return nil, usagef("-%s: %s talks to the schema registry over HTTP, not Kafka; name it with -registry URL", n, c.name)
			}
		}
		u := *url
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		return sr.NewClient(sr.URLs(u))
	}
}

// schemaErr is an error answer as one line.
func schemaErr(err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return fmt.Errorf("schema registry: %s (error %d)", re.Message, re.ErrorCode)
	}
	return err
}

func schemaTypeFlag(c *cliCmd) *string {
	return c.fs.String("type", "avro", "schema type: avro, protobuf or json")
}

// readSchema reads -schema FILE ("-" for stdin) with its type.
func readSchema(c *cliCmd, file, typ string) (sr.Schema, error) {
	var t sr.SchemaType
	if err := t.UnmarshalText([]byte(strings.ToUpper(typ))); err != nil || strings.ToUpper(typ) == "" {
		return sr.Schema{}, usagef("-type %q: want avro, protobuf or json", typ)
	}
	if file == "" {
		return sr.Schema{}, usagef("-schema: required (a file, or - for stdin)")
	}
	var raw []byte
	var err error
	if file == "-" {
		raw, err = readAllLimit(c.env.stdin)
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return sr.Schema{}, fmt.Errorf("-schema %s: %w", file, err)
	}
	return sr.Schema{Schema: string(raw), Type: t}, nil
}

// readAllLimit reads r up to 8 MiB (no schema registry takes more).
func readAllLimit(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 8<<20+1))
	if err == nil && len(raw) > 8<<20 {
		err = errors.New("more than 8 MiB")
	}
	return raw, err
}

// parseSchemaVersion reads -version: a number, latest (-1) or, for
// check, all (-2: every version the subject's level names).
func parseSchemaVersion(v string, allowAll bool) (int, error) {
	switch v {
	case "latest", "":
		return -1, nil
	case "all":
		if allowAll {
			return -2, nil
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		want := "a version number or latest"
		if allowAll {
			want += " or all"
		}
		return 0, usagef("-version %q: want %s", v, want)
	}
	return n, nil
}

func schemaList(c *cliCmd) func(context.Context) error {
	open := c.registryFlag()
	deleted := c.fs.Bool("deleted", false, "include soft-deleted subjects and versions")
	return func(ctx context.Context) error {
		cl, err := open()
		if err != nil {
			return err
		}
		if *deleted {
			ctx = sr.WithParams(ctx, sr.ShowDeleted)
		}
		subjects := c.args
		if len(subjects) == 0 {
			if subjects, err = cl.Subjects(ctx); err != nil {
				return schemaErr(err)
			}
		}
		type row struct {
			Subject  string `json:"subject"`
			Versions []int  `json:"versions"`
			LatestID int    `json:"latest_id"`
			Type     string `json:"type"`
		}
		out := []row{}
		var rows [][]string
		var failed []error
		for _, s := range subjects {
			vs, err := cl.SubjectVersions(ctx, s)
			if err != nil {
				failed = append(failed, fmt.Errorf("subject %s: %w", s, schemaErr(err)))
				continue
			}
			latest, err := cl.SchemaByVersion(ctx, s, -1)
			if err != nil {
				failed = append(failed, fmt.Errorf("subject %s: %w", s, schemaErr(err)))
				continue
			}
			r := row{Subject: s, Versions: vs, LatestID: latest.ID, Type: latest.Type.String()}
			out = append(out, r)
			var vtxt []string
			for _, v := range vs {
				vtxt = append(vtxt, strconv.Itoa(v))
			}
			rows = append(rows, []string{s, strings.Join(vtxt, ","), strconv.Itoa(latest.ID), r.Type})
		}
		return c.answer(out, []string{"SUBJECT", "VERSIONS", "LATEST ID", "TYPE"}, rows, errors.Join(failed...))
	}
}

func schemaGet(c *cliCmd) func(context.Context) error {
	open := c.registryFlag()
	version := c.fs.String("version", "latest", "version number or latest")
	id := c.fs.Int("id", 0, "get the schema with this ID instead of by subject")
	return func(ctx context.Context) error {
		cl, err := open()
		if err != nil {
			return err
		}
		var ss sr.SubjectSchema
		if *id > 0 {
			if err := c.needArgs(0, 0, "no subject with -id"); err != nil {
				return err
			}
			s, err := cl.SchemaByID(ctx, *id)
			if err != nil {
				return schemaErr(err)
			}
			ss = sr.SubjectSchema{ID: *id, Schema: s}
		} else {
			if err := c.needArgs(1, 1, "one subject (or -id ID)"); err != nil {
				return err
			}
			v, err := parseSchemaVersion(*version, false)
			if err != nil {
				return err
			}
			if ss, err = cl.SchemaByVersion(ctx, c.args[0], v); err != nil {
				return schemaErr(err)
			}
		}
		if c.json() {
			return c.printJSON(ss)
		}
		fmt.Fprintf(c.env.stdout, "subject %s version %d id %d type %s\n%s\n", orDash(ss.Subject), ss.Version, ss.ID, ss.Type, ss.Schema.Schema)
		return nil
	}
}

func schemaRegister(c *cliCmd) func(context.Context) error {
	open := c.registryFlag()
	file := c.fs.String("schema", "", "`file` holding the schema (- for stdin)")
	typ := schemaTypeFlag(c)
	normalize := c.fs.Bool("normalize", false, "normalize the schema before comparing it with registered ones")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one subject"); err != nil {
			return err
		}
		s, err := readSchema(c, *file, *typ)
		if err != nil {
			return err
		}
		cl, err := open()
		if err != nil {
			return err
		}
		if *normalize {
			ctx = sr.WithParams(ctx, sr.Normalize)
		}
		ss, err := cl.CreateSchema(ctx, c.args[0], s)
		if err != nil {
			return schemaErr(err)
		}
		out := map[string]any{"subject": ss.Subject, "version": ss.Version, "id": ss.ID}
		return c.answer(out, []string{"SUBJECT", "VERSION", "ID"}, [][]string{{ss.Subject, strconv.Itoa(ss.Version), strconv.Itoa(ss.ID)}}, nil)
	}
}

func schemaCheck(c *cliCmd) func(context.Context) error {
	open := c.registryFlag()
	file := c.fs.String("schema", "", "`file` holding the schema (- for stdin)")
	typ := schemaTypeFlag(c)
	version := c.fs.String("version", "all", "check against this version, latest, or all (what the subject's compatibility level names)")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one subject"); err != nil {
			return err
		}
		s, err := readSchema(c, *file, *typ)
		if err != nil {
			return err
		}
		v, err := parseSchemaVersion(*version, true)
		if err != nil {
			return err
		}
		cl, err := open()
		if err != nil {
			return err
		}
		res, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), c.args[0], v, s)
		if err != nil {
			return schemaErr(err)
		}
		if c.json() {
			if err := c.printJSON(res); err != nil {
				return err
			}
		} else if res.Is {
			fmt.Fprintln(c.env.stdout, "compatible")
		} else {
			fmt.Fprintln(c.env.stdout, "incompatible:")
			for _, m := range res.Messages {
				fmt.Fprintf(c.env.stdout, "  %s\n", m)
			}
		}
		if !res.Is {
			return fmt.Errorf("the schema is not compatible with subject %s", c.args[0])
		}
		return nil
	}
}

func schemaDelete(c *cliCmd) func(context.Context) error {
	open := c.registryFlag()
	version := c.fs.String("version", "", "delete only this version (a number or latest)")
	permanent := c.fs.Bool("permanent", false, "delete for good what was soft-deleted before")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one subject"); err != nil {
			return err
		}
		cl, err := open()
		if err != nil {
			return err
		}
		how := sr.SoftDelete
		if *permanent {
			how = sr.HardDelete
		}
		subject := c.args[0]
		var deleted []int
		if *version != "" {
			v, err := parseSchemaVersion(*version, false)
			if err != nil {
				return err
			}
			if err := cl.DeleteSchema(ctx, subject, v, how); err != nil {
				return schemaErr(err)
			}
			deleted = []int{v}
		} else if deleted, err = cl.DeleteSubject(ctx, subject, how); err != nil {
			return schemaErr(err)
		}
		var rows [][]string
		for _, v := range deleted {
			vs := strconv.Itoa(v)
			if v == -1 {
				vs = "latest"
			}
			rows = append(rows, []string{subject, vs})
		}
		return c.answer(map[string]any{"subject": subject, "versions": deleted, "permanent": *permanent},
			[]string{"SUBJECT", "DELETED VERSION"}, rows, nil)
	}
}

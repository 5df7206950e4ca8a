package lint

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rule forbids some imports to the files of the packages it covers.
type rule struct {
	name   string
	covers func(rel string, test bool) bool // rel: the file's package dir, slash-separated, relative to the module root
	forbid func(rel string) bool            // rel: an import of this module, relative to its root; "" for the root
	other  func(imp string) bool            // an import from outside the module
	why    string
}

// under reports whether rel is dir or below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// storageSet is what storage and internal packages may import of this
// module: each other, but not internal/bench, internal/console or
// internal/schemaregistry (a benchmark harness, the web console and the
// schema registry: clients of the broker, above it).
func storageSet(rel string) bool {
	switch {
	case under(rel, "internal/bench"), under(rel, "internal/console"), under(rel, "internal/schemaregistry"):
		return false
	case under(rel, "logstore"), under(rel, "groupstore"), under(rel, "spool"), under(rel, "internal"):
		return true
	}
	return false
}

func franzGo(imp string) bool { return under(imp, "github.com/twmb/franz-go") }

var rules = []rule{
	{
		name:   "storage",
		covers: func(rel string, test bool) bool { return !test && storageSet(rel) },
		forbid: func(rel string) bool { return !storageSet(rel) },
		other:  franzGo,
		why:    "storage and internal packages know nothing of Kafka requests, error codes or the layers above them",
	},
	{
		name:   "storage tests",
		covers: func(rel string, test bool) bool { return test && storageSet(rel) },
		forbid: func(rel string) bool { return !storageSet(rel) },
		other:  func(string) bool { return false },
		why:    "a storage test may use a Kafka client, but a test that needs the broker belongs with the broker's tests",
	},
	{
		name: "coordinator",
		covers: func(rel string, test bool) bool {
			return under(rel, "broker/internal/groups") || under(rel, "broker/internal/share")
		},
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "the group coordinator sees the broker only through the interface it declares",
	},
	{
		name:   "txn coordinator",
		covers: func(rel string, test bool) bool { return under(rel, "broker/internal/txn") },
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "the transaction coordinator sees the broker only through the interfaces it declares",
	},
	{
		name:   "uplink",
		covers: func(rel string, test bool) bool { return under(rel, "broker/uplink") },
		forbid: uplinkForbids,
		other:  func(string) bool { return false },
		why:    "the uplink is a client of the upstream cluster and sees the broker only through the interfaces it declares",
	},
	{
		name: "sasl",
		covers: func(rel string, test bool) bool {
			return under(rel, "broker/internal/sasl") || under(rel, "broker/internal/oauth")
		},
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  franzGo,
		why:    "SASL's mechanisms and credential store take tokens and give answers; Kafka requests, codes and connections are the broker's",
	},
	{
		name: "control",
		covers: func(rel string, test bool) bool {
			return under(rel, "broker/internal/faults") || under(rel, "broker/internal/reqlog") ||
				under(rel, "broker/internal/quota") || under(rel, "broker/internal/inspect") ||
				under(rel, "broker/internal/fetchsession") || under(rel, "broker/internal/topicconfig") ||
				under(rel, "broker/internal/brokerconfig") || under(rel, "broker/internal/cluster") ||
				under(rel, "broker/internal/cleaner")
		},
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "faults, the request log, quotas, inspection, fetch sessions, topic configs, the cluster's state and the log cleaner take decoded requests, answers, records and values; dispatch and connections are the broker's",
	},
	{
		name:   "configs",
		covers: func(rel string, test bool) bool { return under(rel, "broker/internal/configs") },
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "the config resources see the broker only through the interfaces they declare; authorization, dispatch and connections are the broker's",
	},
	{
		name: "authorizer",
		covers: func(rel string, test bool) bool {
			return under(rel, "broker/internal/acl") || under(rel, "broker/internal/dtoken")
		},
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "ACLs and delegation tokens take decoded requests and principals and give decisions and codes; connections and dispatch are the broker's",
	},
	{
		name: "admin",
		covers: func(rel string, test bool) bool {
			return under(rel, "broker/internal/errresp") || under(rel, "broker/internal/cleanstop") ||
				under(rel, "broker/internal/features") || under(rel, "broker/internal/topics")
		},
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "error answers, the clean-shutdown marker, the features table and topic administration take decoded requests, files and values; dispatch, connections and the topic table are the broker's",
	},
	{
		name: "partition state",
		covers: func(rel string, test bool) bool {
			return under(rel, "broker/internal/producers") || under(rel, "broker/internal/listeners") ||
				under(rel, "broker/internal/recordcheck")
		},
		forbid: func(rel string) bool { return rel == "broker" || under(rel, "protocol") },
		other:  func(string) bool { return false },
		why:    "idempotent-producer state, record validation and the listeners take batch headers, topic configs, listener names and nodes; partitions, requests and connections are the broker's",
	},
}

// uplinkForbids is what broker/uplink, tests included, may not import of
// this module: the broker and anything under it but the uplink itself, the
// protocol layer, and everything above them (the root package, cmd,
// minikafkatest, internal/bench and internal/console). Storage packages,
// internal helpers and franz-go's clients are its to use.
func uplinkForbids(rel string) bool {
	switch {
	case under(rel, "broker/uplink"):
		return false
	case rel == "", under(rel, "broker"), under(rel, "protocol"), under(rel, "cmd"), under(rel, "minikafkatest"),
		under(rel, "internal/bench"), under(rel, "internal/console"):
		return true
	}
	return false
}

// violation is one forbidden import.
type violation struct {
	file string // relative to the module root, slash-separated
	line int
	imp  string
	rule string
}

func (v violation) String() string {
	return fmt.Sprintf("%s:%d: imports %s (rule %q)", v.file, v.line, v.imp, v.rule)
}

// checkImports parses every .go file under root, the root of module mod,
// and returns the imports that break rules, and how many files each rule
// covered. Directories Go ignores (testdata, vendor, names starting with
// . or _) and nested modules are skipped.
func checkImports(root string, rules []rule) ([]violation, map[string]int, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, nil, err
	}
	var out []violation
	covered := map[string]int{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		relFile, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		relFile = filepath.ToSlash(relFile)
		dir := path.Dir(relFile)
		if dir == "." {
			dir = ""
		}
		test := strings.HasSuffix(name, "_test.go")
		var applied []rule
		for _, r := range rules {
			if r.covers(dir, test) {
				applied = append(applied, r)
				covered[r.name]++
			}
		}
		if len(applied) == 0 {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, is := range f.Imports {
			imp, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", relFile, err)
			}
			for _, r := range applied {
				var bad bool
				if imp == mod || strings.HasPrefix(imp, mod+"/") {
					bad = r.forbid(strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/"))
				} else {
					bad = r.other(imp)
				}
				if bad {
					out = append(out, violation{relFile, fset.Position(is.Pos()).Line, imp, r.name})
				}
			}
		}
		return nil
	})
	return out, covered, err
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// TestImports holds the module to the import rules (see doc.go).
func TestImports(t *testing.T) {
	root := moduleRoot(t)
	vs, covered, err := checkImports(root, rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("%v: %s", v, ruleWhy(v.rule))
	}
	// A rule that covers no file would pass whatever the code does.
	for _, r := range []string{"storage", "storage tests"} {
		if covered[r] == 0 {
			t.Errorf("rule %q covered no file: the walk or the rule is wrong", r)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "broker", "internal", "groups")); err == nil && covered["coordinator"] == 0 {
		t.Error(`broker/internal/groups exists but rule "coordinator" covered none of its files`)
	}
	if _, err := os.Stat(filepath.Join(root, "broker", "internal", "txn")); err == nil && covered["txn coordinator"] == 0 {
		t.Error(`broker/internal/txn exists but rule "txn coordinator" covered none of its files`)
	}
	if _, err := os.Stat(filepath.Join(root, "broker", "uplink")); err == nil && covered["uplink"] == 0 {
		t.Error(`broker/uplink exists but rule "uplink" covered none of its files`)
	}
	if _, err := os.Stat(filepath.Join(root, "broker", "internal", "sasl")); err == nil && covered["sasl"] == 0 {
		t.Error(`broker/internal/sasl exists but rule "sasl" covered none of its files`)
	}
	if _, err := os.Stat(filepath.Join(root, "broker", "internal", "configs")); err == nil && covered["configs"] == 0 {
		t.Error(`broker/internal/configs exists but rule "configs" covered none of its files`)
	}
	for _, dir := range []string{"faults", "reqlog", "quota", "inspect", "fetchsession", "topicconfig", "brokerconfig", "cluster", "cleaner"} {
		if _, err := os.Stat(filepath.Join(root, "broker", "internal", dir)); err == nil && covered["control"] == 0 {
			t.Errorf(`broker/internal/%s exists but rule "control" covered none of its files`, dir)
		}
	}
	for _, dir := range []string{"errresp", "cleanstop", "features", "topics"} {
		if _, err := os.Stat(filepath.Join(root, "broker", "internal", dir)); err == nil && covered["admin"] == 0 {
			t.Errorf(`broker/internal/%s exists but rule "admin" covered none of its files`, dir)
		}
	}
	for _, dir := range []string{"acl", "dtoken"} {
		if _, err := os.Stat(filepath.Join(root, "broker", "internal", dir)); err == nil && covered["authorizer"] == 0 {
			t.Errorf(`broker/internal/%s exists but rule "authorizer" covered none of its files`, dir)
		}
	}
	for _, dir := range []string{"producers", "listeners", "recordcheck"} {
		if _, err := os.Stat(filepath.Join(root, "broker", "internal", dir)); err == nil && covered["partition state"] == 0 {
			t.Errorf(`broker/internal/%s exists but rule "partition state" covered none of its files`, dir)
		}
	}
	t.Logf("files checked per rule: %v", covered)
}

func ruleWhy(name string) string {
	for _, r := range rules {
		if r.name == name {
			return r.why
		}
	}
	return ""
}

// TestCheckImportsFindsViolations runs the checker on a small module
// holding one violation of each kind, and allowed imports beside them, so
// that TestImports cannot pass because the checker sees nothing.
func TestCheckImportsFindsViolations(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		// Storage: a Kafka import, an upward import, one hidden behind a
		// build constraint; internal and storage imports are fine.
		"logstore/a.go": `package logstore

import (
	"os"

	"example.com/m/internal/vfs"
	"github.com/twmb/franz-go/pkg/kmsg"
)
`,
		"logstore/b_windows.go": "//go:build windows\n\npackage logstore\n\nimport \"github.com/twmb/franz-go/pkg/kerr\"\n",
		"spool/s.go":            "package spool\n\nimport _ \"example.com/m/logstore\"\n",
		"internal/x/x.go":       "package x\n\nimport \"example.com/m/protocol\"\n",
		"internal/y/y.go":       "package y\n\nimport mk \"example.com/m\"\n",
		"groupstore/g.go":       "package groupstore\n\nimport \"example.com/m/internal/bench\"\n",
		// Storage tests: a Kafka client is fine, the broker is not.
		"logstore/a_test.go": "package logstore\n\nimport \"github.com/twmb/franz-go/pkg/kgo\"\n",
		"spool/s_test.go":    "package spool_test\n\nimport \"example.com/m/broker/sub\"\n",
		// internal/bench is a tool above the broker.
		"internal/bench/h.go": "package bench\n\nimport (\n\t\"example.com/m\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		// The coordinator: kerr and its own subpackages are fine.
		"broker/internal/groups/c.go":        "package groups\n\nimport (\n\t\"example.com/m/broker/internal/groups/assign\"\n\t\"github.com/twmb/franz-go/pkg/kerr\"\n)\n",
		"broker/internal/groups/c_test.go":   "package groups_test\n\nimport \"example.com/m/broker\"\n",
		"broker/internal/groups/assign/a.go": "package assign\n\nimport \"example.com/m/protocol\"\n",
		// The transaction coordinator: kmsg and storage are fine.
		"broker/internal/txn/t.go":      "package txn\n\nimport (\n\t\"example.com/m/groupstore\"\n\t\"example.com/m/protocol\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		"broker/internal/txn/t_test.go": "package txn\n\nimport \"example.com/m/broker\"\n",
		// SASL: storage helpers and the oauth validator are fine; the
		// broker, kmsg and (in a test too) protocol are not.
		"broker/internal/sasl/s.go":      "package sasl\n\nimport (\n\t\"example.com/m/broker/internal/oauth\"\n\t\"example.com/m/internal/vfs\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		"broker/internal/sasl/s_test.go": "package sasl\n\nimport \"example.com/m/protocol\"\n",
		"broker/internal/oauth/o.go":     "package oauth\n\nimport \"example.com/m/broker\"\n",
		// Faults, the request log, quotas: kmsg, kerr and storage helpers
		// are fine; the broker and protocol are not, in tests too.
		"broker/internal/faults/f.go":      "package faults\n\nimport (\n\t\"example.com/m/protocol\"\n\t\"github.com/twmb/franz-go/pkg/kerr\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		"broker/internal/reqlog/r_test.go": "package reqlog\n\nimport \"example.com/m/broker\"\n",
		"broker/internal/quota/q.go":       "package quota\n\nimport \"example.com/m/internal/vfs\"\n",
		// The config resources: kmsg, kerr, the config packages and
		// storage helpers are fine; the broker and protocol are not.
		"broker/internal/configs/c.go":      "package configs\n\nimport (\n\t\"example.com/m/broker/internal/brokerconfig\"\n\t\"example.com/m/internal/vfs\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		"broker/internal/configs/c_test.go": "package configs\n\nimport \"example.com/m/protocol\"\n",
		// ACLs and delegation tokens: kmsg, kerr and sasl are fine; the
		// broker and protocol are not, in tests too.
		"broker/internal/acl/a.go":         "package acl\n\nimport (\n\t\"example.com/m/protocol\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		"broker/internal/dtoken/d_test.go": "package dtoken\n\nimport (\n\t\"example.com/m/broker\"\n\t\"example.com/m/broker/internal/sasl\"\n)\n",
		// Topic administration, features, the marker, error answers:
		// kmsg and storage are fine; the broker and protocol are not.
		"broker/internal/features/f.go":    "package features\n\nimport (\n\t\"example.com/m/protocol\"\n\t\"github.com/twmb/franz-go/pkg/kmsg\"\n)\n",
		"broker/internal/topics/t_test.go": "package topics\n\nimport (\n\t\"example.com/m/broker\"\n\t\"example.com/m/logstore\"\n)\n",
		// Producer state and listeners: kerr, records and logstore are
		// fine; the broker and protocol are not, in tests too.
		"broker/internal/producers/p.go":        "package producers\n\nimport (\n\t\"example.com/m/logstore\"\n\t\"example.com/m/protocol\"\n\t\"github.com/twmb/franz-go/pkg/kerr\"\n)\n",
		"broker/internal/recordcheck/r_test.go": "package recordcheck\n\nimport \"example.com/m/broker\"\n",
		"broker/internal/listeners/l_test.go":   "package listeners\n\nimport \"example.com/m/broker\"\n",
		// The uplink: franz-go, storage, internal helpers and its own
		// subpackages are fine; the broker (internal coordinators
		// included), protocol and the layers above are not, in tests too.
		"broker/uplink/u.go":      "package uplink\n\nimport (\n\t\"example.com/m/broker/uplink/sub\"\n\t\"example.com/m/internal/vfs\"\n\t\"example.com/m/spool\"\n\t\"github.com/twmb/franz-go/pkg/kgo\"\n)\n",
		"broker/uplink/v.go":      "package uplink\n\nimport (\n\t\"example.com/m/broker\"\n\t\"example.com/m/broker/internal/groups\"\n)\n",
		"broker/uplink/u_test.go": "package uplink_test\n\nimport (\n\t\"example.com/m\"\n\t\"example.com/m/minikafkatest\"\n)\n",
		"broker/uplink/sub/s.go":  "package sub\n\nimport \"example.com/m/protocol\"\n",
		// Not checked: the broker itself, testdata, a nested module.
		"broker/b.go":            "package broker\n\nimport \"github.com/twmb/franz-go/pkg/kmsg\"\n",
		"logstore/testdata/t.go": "package t\n\nimport \"example.com/m/broker\"\n",
		"internal/nested/go.mod": "module example.com/nested\n",
		"internal/nested/n.go":   "package nested\n\nimport \"github.com/twmb/franz-go/pkg/kmsg\"\n",
	}
	for name, src := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vs, covered, err := checkImports(root, rules)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	want := []string{
		`broker/internal/acl/a.go:4: imports example.com/m/protocol (rule "authorizer")`,
		`broker/internal/configs/c_test.go:3: imports example.com/m/protocol (rule "configs")`,
		`broker/internal/dtoken/d_test.go:4: imports example.com/m/broker (rule "authorizer")`,
		`broker/internal/faults/f.go:4: imports example.com/m/protocol (rule "control")`,
		`broker/internal/features/f.go:4: imports example.com/m/protocol (rule "admin")`,
		`broker/internal/groups/assign/a.go:3: imports example.com/m/protocol (rule "coordinator")`,
		`broker/internal/groups/c_test.go:3: imports example.com/m/broker (rule "coordinator")`,
		`broker/internal/listeners/l_test.go:3: imports example.com/m/broker (rule "partition state")`,
		`broker/internal/oauth/o.go:3: imports example.com/m/broker (rule "sasl")`,
		`broker/internal/producers/p.go:5: imports example.com/m/protocol (rule "partition state")`,
		`broker/internal/recordcheck/r_test.go:3: imports example.com/m/broker (rule "partition state")`,
		`broker/internal/reqlog/r_test.go:3: imports example.com/m/broker (rule "control")`,
		`broker/internal/sasl/s.go:6: imports github.com/twmb/franz-go/pkg/kmsg (rule "sasl")`,
		`broker/internal/sasl/s_test.go:3: imports example.com/m/protocol (rule "sasl")`,
		`broker/internal/topics/t_test.go:4: imports example.com/m/broker (rule "admin")`,
		`broker/internal/txn/t.go:5: imports example.com/m/protocol (rule "txn coordinator")`,
		`broker/internal/txn/t_test.go:3: imports example.com/m/broker (rule "txn coordinator")`,
		`broker/uplink/sub/s.go:3: imports example.com/m/protocol (rule "uplink")`,
		`broker/uplink/u_test.go:4: imports example.com/m (rule "uplink")`,
		`broker/uplink/u_test.go:5: imports example.com/m/minikafkatest (rule "uplink")`,
		`broker/uplink/v.go:4: imports example.com/m/broker (rule "uplink")`,
		`broker/uplink/v.go:5: imports example.com/m/broker/internal/groups (rule "uplink")`,
		`groupstore/g.go:3: imports example.com/m/internal/bench (rule "storage")`,
		`internal/x/x.go:3: imports example.com/m/protocol (rule "storage")`,
		`internal/y/y.go:3: imports example.com/m (rule "storage")`,
		`logstore/a.go:7: imports github.com/twmb/franz-go/pkg/kmsg (rule "storage")`,
		`logstore/b_windows.go:5: imports github.com/twmb/franz-go/pkg/kerr (rule "storage")`,
		`spool/s_test.go:3: imports example.com/m/broker/sub (rule "storage tests")`,
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if covered["coordinator"] != 3 {
		t.Errorf("coordinator rule covered %d files, want 3", covered["coordinator"])
	}
	if covered["txn coordinator"] != 2 {
		t.Errorf("txn coordinator rule covered %d files, want 2", covered["txn coordinator"])
	}
	if covered["uplink"] != 4 {
		t.Errorf("uplink rule covered %d files, want 4", covered["uplink"])
	}
	if covered["sasl"] != 3 {
		t.Errorf("sasl rule covered %d files, want 3", covered["sasl"])
	}
	if covered["control"] != 3 {
		t.Errorf("control rule covered %d files, want 3", covered["control"])
	}
	if covered["admin"] != 2 {
		t.Errorf("admin rule covered %d files, want 2", covered["admin"])
	}
	if covered["configs"] != 2 {
		t.Errorf("configs rule covered %d files, want 2", covered["configs"])
	}
	if covered["partition state"] != 3 {
		t.Errorf("partition state rule covered %d files, want 3", covered["partition state"])
	}
}

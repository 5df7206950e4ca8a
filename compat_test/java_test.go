package compat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// Apache Kafka's own Java client (kafka-clients, compat_test/java) against
// minikafka. The Maven module holds the scenarios; this test builds it,
// starts the brokers and runs it once, with one subtest per scenario. The
// first build downloads kafka-clients and its dependencies from Maven
// Central into ~/.m2 (install.sh does that ahead of CI's run).
//
// MINIKAFKA_JAVA_SCENARIOS, a comma-separated list of name prefixes, runs
// only those scenarios (e.g. "admin/,share/").

// javaAnswer is one line the Java suite prints.
type javaAnswer struct {
	Plan     []string `json:"plan"`
	Scenario string   `json:"scenario"`
	OK       bool     `json:"ok"`
	MS       int64    `json:"ms"`
	Error    string   `json:"error"`
	Topic    string   `json:"topic"`
	Records  []rec    `json:"records"`
}

// buildJava compiles compat_test/java once per test binary and returns the
// java command's classpath.
var buildJava = sync.OnceValues(func() (string, error) {
	dir, err := filepath.Abs("java")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mvn", "-B", "-q", "compile", "dependency:build-classpath",
		"-Dmdep.outputFile=target/classpath.txt")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &buildError{err: err, out: lastLines(string(out), 30)}
	}
	deps, err := os.ReadFile(filepath.Join(dir, "target", "classpath.txt"))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(deps)), nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "mvn compile: " + e.err.Error() + "\n" + e.out }

// javaTools skips the test when there is no JDK or Maven: the only reason
// the Java client does not run.
func javaTools(t *testing.T) {
	for _, tool := range []string{"java", "javac", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed, so Apache Kafka's Java client cannot run (%v); %s", tool, err, installHint)
		}
	}
}

func TestJavaClient(t *testing.T) {
	javaTools(t)
	cp, err := buildJava()
	if err != nil {
		t.Fatal(err)
	}
	b := minikafkatest.New(t, minikafka.WithAutoCreateTopics(true), minikafka.WithDefaultPartitions(1),
		// KIP-848 members learn of a new assignment on their next
		// heartbeat: a short interval keeps the group scenarios quick.
		minikafka.WithGroupConsumerHeartbeatInterval(500*time.Millisecond))
	aclAddr := aclBroker(t)
	addrs := b.Addrs()

	args := []string{"-cp", cp, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"minikafka.compat.Suite", strings.Join(addrs, ","), aclAddr}
	if only := os.Getenv("MINIKAFKA_JAVA_SCENARIOS"); only != "" {
		args = append(args, strings.Split(only, ",")...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var plan []string
	got := map[string]javaAnswer{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var a javaAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Errorf("java suite: bad line %q: %v", sc.Text(), err)
			continue
		}
		if a.Plan != nil {
			plan = a.Plan
			continue
		}
		got[a.Scenario] = a
		t.Logf("java %s: ok=%v %dms", a.Scenario, a.OK, a.MS)
	}
	werr := cmd.Wait()
	t.Logf("java suite: %d scenarios in %v", len(got), time.Since(start).Round(time.Millisecond))
	if werr != nil {
		t.Errorf("java suite: %v\n%s", werr, lastLines(stderr.String(), 40))
	}
	if len(plan) == 0 {
		t.Fatalf("java suite printed no plan; stderr:\n%s", lastLines(stderr.String(), 40))
	}
	logs := splitJavaLog(stderr.String())
	passed := 0
	for _, name := range plan {
		a, ok := got[name]
		t.Run(name, func(t *testing.T) {
			if !ok {
				t.Fatalf("the suite did not report this scenario")
			}
			if !a.OK {
				t.Fatalf("%s\n--- the client's log:\n%s", a.Error, lastLines(logs[name], 60))
			}
			// What Java produced, read back by kgo.
			if a.Topic != "" {
				verifyRecords(t, "kgo reading java's "+a.Topic, a.Records, refConsume(t, addrs, a.Topic, 3, len(a.Records)))
			}
		})
		if ok && a.OK {
			passed++
		}
	}
	t.Logf("java suite: %d/%d scenarios passed", passed, len(plan))
	if os.Getenv("MINIKAFKA_JAVA_LOG") != "" {
		t.Logf("java stderr:\n%s", stderr.String())
	}
}

// splitJavaLog cuts the suite's stderr at its "=== scenario" lines.
func splitJavaLog(s string) map[string]string {
	out := map[string]string{}
	cur := ""
	for _, l := range strings.SplitAfter(s, "\n") {
		if name, ok := strings.CutPrefix(l, "=== "); ok {
			cur = strings.TrimSpace(name)
			continue
		}
		out[cur] += l
	}
	return out
}

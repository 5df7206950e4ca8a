package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds the minikafka command once per test run.
func buildBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("MINIKAFKA_TEST_BINARY"); bin != "" {
		return bin // another build, for before/after measurements
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "minikafka-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "minikafka")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type proc struct {
	cmd    *exec.Cmd
	stdout *lineBuf
	stderr *lineBuf
	addr   string // advertised address, once started
	done   chan struct{}
	code   int
}

// lineBuf collects output and lets a test wait for a matching line.
type lineBuf struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func newLineBuf() *lineBuf { return &lineBuf{lines: make(chan string, 1024)} }

func (l *lineBuf) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		l.buf.WriteString(sc.Text() + "\n")
		l.mu.Unlock()
		select {
		case l.lines <- sc.Text():
		default:
		}
	}
}

func (l *lineBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// launch runs the binary; it does not wait for it to serve.
func launch(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{cmd: cmd, stdout: newLineBuf(), stderr: newLineBuf(), done: make(chan struct{})}
	so, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	se, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.stdout.consume(so) }()
	go func() { defer wg.Done(); p.stderr.consume(se) }()
	go func() {
		wg.Wait()
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

var listeningRE = regexp.MustCompile(`advertised as (\S+);`)

// serve launches the binary and waits for its "listening" line.
func serve(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := launch(t, env, args...)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line := <-p.stdout.lines:
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				p.addr = m[1]
				return p
			}
		case <-p.done:
			t.Fatalf("minikafka exited with %d before serving\nstdout:\n%s\nstderr:\n%s", p.code, p.stdout, p.stderr)
		case <-timeout:
			t.Fatalf("minikafka did not report listening\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(30 * time.Second):
		t.Fatalf("minikafka did not exit\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		return -1
	}
}

func noPanic(t *testing.T, p *proc) {
	t.Helper()
	if s := p.stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
		t.Fatalf("stderr shows a panic:\n%s", s)
	}
}

func produceN(t *testing.T, addr, topic string, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for i := from; i < from+n; i++ {
		rs = append(rs, kgo.StringRecord("record-"+strconv.Itoa(i)))
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func consumeAll(t *testing.T, addr, topic string, n int) map[string]bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := map[string]bool{}
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(got), n)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	return got
}

func TestProduceSIGTERMRestartKeepsRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := serve(t, nil, "-listen", "127.0.0.1:0", "-data", dir)
	if !strings.Contains(p.stdout.String(), "data in "+dir) || !strings.Contains(p.stdout.String(), "durability always") {
		t.Fatalf("startup line does not say where data lives:\n%s", p.stdout)
	}
	produceN(t, p.addr, "events", 0, 100)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM\nstderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stdout.String(), "minikafka stopped") {
		t.Fatalf("no clean stop message:\n%s", p.stdout)
	}
	noPanic(t, p)

	p = serve(t, nil, "-listen", "127.0.0.1:0", "-data", dir)
	got := consumeAll(t, p.addr, "events", 100)
	for i := range 100 {
		if !got["record-"+strconv.Itoa(i)] {
			t.Fatalf("record %d missing after restart", i)
		}
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGINT", code)
	}
}

// SIGKILL is not a power loss (the page cache survives), but with
// durability always every acknowledged record must be there after it.
func TestSIGKILLKeepsAckedRecords(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, nil, "-listen", "127.0.0.1:0", "-data", dir, "-durability", "always")
	produceN(t, p.addr, "acked", 0, 50)
	produceN(t, p.addr, "acked", 50, 50)
	p.cmd.Process.Kill()
	p.wait(t)

	p = serve(t, nil, "-listen", "127.0.0.1:0", "-data", dir)
	if got := consumeAll(t, p.addr, "acked", 100); len(got) != 100 {
		t.Fatalf("%d records after SIGKILL", len(got))
	}
}

func TestBusyPortMessage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := launch(t, nil, "-listen", ln.Addr().String(), "-in-memory")
	if code := p.wait(t); code != 1 {
		t.Fatalf("exit code %d, want 1\nstderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "already in use") || !strings.Contains(p.stderr.String(), ln.Addr().String()) {
		t.Fatalf("stderr does not explain the busy port:\n%s", p.stderr)
	}
	noPanic(t, p)
}

func TestBadFlagMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{args: []string{"-no-such-flag"}, want: "flag provided but not defined: -no-such-flag"},
		{args: []string{"-durability", "sometimes"}, want: `invalid value "sometimes" for flag -durability`},
		{args: []string{"-node-id", "x"}, want: "-node-id"},
		{args: []string{"-default-partitions", "0"}, want: "-default-partitions 0"},
		{args: []string{"extra"}, want: `unknown command "extra"`},
		{args: []string{"-in-memory", "extra"}, want: "unexpected arguments"},
		{env: []string{"MINIKAFKA_NODE_ID=abc"}, want: "MINIKAFKA_NODE_ID"},
		{env: []string{"MINIKAFKA_LOG_LEVEL=loud"}, want: "MINIKAFKA_LOG_LEVEL"},
	} {
		p := launch(t, tc.env, tc.args...)
		if code := p.wait(t); code != 2 {
			t.Fatalf("%v %v: exit code %d, want 2\nstderr:\n%s", tc.env, tc.args, code, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), tc.want) {
			t.Fatalf("%v %v: stderr lacks %q:\n%s", tc.env, tc.args, tc.want, p.stderr)
		}
		noPanic(t, p)
	}
}

func TestUnusableDataDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		p := launch(t, nil, "-listen", "127.0.0.1:0", "-data", dir)
		if code := p.wait(t); code != 1 {
			t.Fatalf("-data %s: exit code %d, want 1\nstderr:\n%s", dir, code, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "data directory "+dir+" is not usable") {
			t.Fatalf("-data %s: stderr:\n%s", dir, p.stderr)
		}
		noPanic(t, p)
	}
}

func TestEnvironmentSettings(t *testing.T) {
	p := serve(t, []string{"MINIKAFKA_LISTEN=127.0.0.1:0", "MINIKAFKA_IN_MEMORY=true", "MINIKAFKA_ADVERTISE=127.0.0.1:0"})
	if !strings.Contains(p.stdout.String(), "data in memory") {
		t.Fatalf("MINIKAFKA_IN_MEMORY ignored:\n%s", p.stdout)
	}
	answerApiVersions(t, p.addr, 5*time.Second)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestParseSettingsPrecedence(t *testing.T) {
	env := map[string]string{
		"MINIKAFKA_LISTEN":             ":1234",
		"MINIKAFKA_DATA":               "/from/env",
		"MINIKAFKA_DEFAULT_PARTITIONS": "3",
		"MINIKAFKA_AUTO_CREATE_TOPICS": "false",
		"MINIKAFKA_DURABILITY":         "never",

		"MINIKAFKA_SOCKET_SEND_BUFFER_BYTES": "-1",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{"-data", "/from/flag", "-fsync", "always"}, lookup, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if s.listen != ":1234" || s.data != "/from/flag" || s.partitions != 3 || s.autoCreate || s.durability != "always" || s.sendBuffer != -1 {
		t.Fatalf("settings %+v", s)
	}
	s, err = parseSettings(nil, func(string) (string, bool) { return "", false }, &stderr)
	if err != nil || s.listen != ":9092" || s.data != "./data" || s.durability != "always" || !s.autoCreate || s.advertise != "" || s.sendBuffer != 0 {
		t.Fatalf("defaults %+v, %v", s, err)
	}
}

// answerApiVersions dials addr until an ApiVersions request is answered.
func answerApiVersions(t testing.TB, addr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := apiVersions(addr)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ApiVersions answer from %s: %v", addr, err)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func apiVersions(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	req := kmsg.NewPtrApiVersionsRequest()
	f := []byte{0, 0, 0, 0, 0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff}
	f = req.AppendTo(f)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	if _, err := c.Write(f); err != nil {
		return err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:])-4)
	if _, err := io.ReadFull(c, body); err != nil {
		return err
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := resp.ReadFrom(body); err != nil {
		return err
	}
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		return fmt.Errorf("ApiVersions error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
	return nil
}

func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func rssKiB(pid int) (int, error) { return statusKiB(pid, "VmRSS:") }

// statusKiB reads a kB field (VmRSS:, VmHWM:) of /proc/PID/status.
func statusKiB(pid int, field string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s", field)
}

// cpuNanos sums the CPU time of every thread of process pid so far.
func cpuNanos(pid int) (int64, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		}
	}
	return total, nil
}

// baselineSrc is the smallest Go program that answers ApiVersions: the
// floor for a Go binary's start-to-first-answer on this machine.
const baselineSrc = `package main

import (
	"encoding/binary"
	"io"
	"net"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		panic(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var hdr [12]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(hdr[:]))-8)
			// ApiVersions v0: error 0, one key (18, 0..4).
			resp := []byte{0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 18, 0, 0, 0, 4}
			copy(resp[4:8], hdr[8:12])
			c.Write(resp)
		}()
	}
}
`

// BenchmarkBinaryStartToFirstAnswer measures exec of the binary (in
// memory) to its first ApiVersions answer, and its idle RSS, alternating
// with the baseline program above (baseline-ms and ratio in the same run).
func BenchmarkBinaryStartToFirstAnswer(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(baselineSrc), 0o644); err != nil {
		b.Fatal(err)
	}
	base := filepath.Join(dir, "baseline")
	if out, err := exec.Command("go", "build", "-o", base, filepath.Join(dir, "main.go")).CombinedOutput(); err != nil {
		b.Fatalf("building the baseline: %v\n%s", err, out)
	}
	run := func(args ...string) (wall time.Duration, cpu int64, rss int) {
		start := time.Now()
		cmd := exec.Command(args[0], args[1:]...)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		answerApiVersions(b, args[len(args)-1], 10*time.Second)
		wall = time.Since(start)
		// CPU time is steadier than wall time on a shared machine.
		cpu, _ = cpuNanos(cmd.Process.Pid)
		time.Sleep(200 * time.Millisecond)
		rss, _ = rssKiB(cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		return wall, cpu, rss
	}
	var rss int
	var cpu, baseCPU int64
	var wall, baseWall time.Duration
	b.StopTimer()
	for range b.N {
		w, c, r := run(bin, "-in-memory", "-log-level", "warn", "-listen", freePort(b))
		wall, cpu, rss = wall+w, cpu+c, max(rss, r)
		w, c, _ = run(base, freePort(b))
		baseWall, baseCPU = baseWall+w, baseCPU+c
	}
	n := float64(b.N)
	// ns/op is minikafka's exec-to-first-answer time only.
	b.ReportMetric(float64(wall.Nanoseconds())/n, "ns/op")
	b.ReportMetric(float64(baseWall.Microseconds())/n/1e3, "baseline-ms")
	b.ReportMetric(float64(wall)/float64(baseWall), "x-baseline")
	b.ReportMetric(float64(cpu)/n/1e6, "CPU-ms")
	b.ReportMetric(float64(baseCPU)/n/1e6, "baseline-CPU-ms")
	b.ReportMetric(float64(rss)/1024, "idle-RSS-MiB")
}

// run in-process: a context cancelled during startup gives a plain
// message and exit 1; a normal start reports its address and stops on
// cancellation with exit 0.
func TestRunInProcess(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"-in-memory", "-listen", "127.0.0.1:0"}, none, &stdout, &stderr, nil); code != 1 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted while starting") {
		t.Fatalf("stderr: %s", stderr.String())
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	started := make(chan *minikafka.Broker, 1)
	done := make(chan int, 1)
	var out syncBuffer
	go func() {
		done <- run(ctx, []string{"-in-memory", "-listen", "127.0.0.1:0", "-log-level", "error"}, none, &out, io.Discard, started)
	}()
	b := <-started
	answerApiVersions(t, b.Addr(), 5*time.Second)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	if s := out.String(); !strings.Contains(s, "listening on "+b.ListenAddr().String()) || !strings.Contains(s, "minikafka stopped") {
		t.Fatalf("stdout: %s", s)
	}
}

// runStarted runs the binary's main in process, in memory on a free port,
// with args after those and env as its environment, and returns the
// broker once it serves. Cleanup stops it and fails the test unless it
// exits 0.
func runStarted(t *testing.T, env map[string]string, args ...string) *minikafka.Broker {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *minikafka.Broker, 1)
	done := make(chan int, 1)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	all := append([]string{"-in-memory", "-listen", "127.0.0.1:0", "-log-level", "error"}, args...)
	go func() { done <- run(ctx, all, lookup, io.Discard, io.Discard, started) }()
	select {
	case b := <-started:
		t.Cleanup(func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("exit %d", code)
			}
		})
		return b
	case code := <-done:
		cancel()
		t.Fatalf("run exited with %d", code)
		return nil
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	serve(t, nil, "-listen", "127.0.0.1:0", "-data", dir)
	p := launch(t, nil, "-listen", "127.0.0.1:0", "-data", dir)
	if code := p.wait(t); code != 1 {
		t.Fatalf("exit code %d, want 1\nstderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), dir+" is in use by another running broker") {
		t.Fatalf("stderr:\n%s", p.stderr)
	}
	noPanic(t, p)
}

// In memory, the startup line says where the data lives and names no
// durability policy, which would mean nothing there.
func TestInMemoryStartupLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	started := make(chan *minikafka.Broker, 1)
	done := make(chan int, 1)
	none := func(string) (string, bool) { return "", false }
	go func() {
		done <- run(ctx, []string{"-in-memory", "-listen", "127.0.0.1:0", "-log-level", "error"}, none, &out, io.Discard, started)
	}()
	select {
	case <-started:
	case code := <-done:
		t.Fatalf("run exited with %d", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	if line := out.String(); !strings.Contains(line, "data in memory (lost on exit)") || strings.Contains(line, "durability") {
		t.Fatalf("startup line: %q", line)
	}
}

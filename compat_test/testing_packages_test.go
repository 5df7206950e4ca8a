package compat_test

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The ways in for tests not written in Go: the pytest plugin
// (minikafkatest/python), the npm package (minikafkatest/node) and the
// FROM-scratch image (Dockerfile), each run against a binary built here.

// buildStatic builds cmd/minikafka the way the Dockerfile and `go install`
// users get it without a C toolchain: CGO_ENABLED=0. It returns the
// directory holding the binary (named minikafka, for PATH) and its path.
func buildStatic(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "minikafka")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/minikafka")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir, bin
}

// packageEnv is the environment for the packages' own test suites: the
// binary only on PATH (MINIKAFKA_BIN cleared, so the PATH lookup is what runs).
func packageEnv(binDir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MINIKAFKA_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1")
	return append(env, extra...)
}

func runSuite(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), lastLines(string(out), 5))
}

func TestTestingPackages(t *testing.T) {
	binDir, _ := buildStatic(t)
	t.Run("pytest-minikafka", func(t *testing.T) {
		if out, err := exec.Command("/usr/bin/python3", "-c", "import pytest, kafka").CombinedOutput(); err != nil {
			t.Fatalf("pytest or kafka-python missing (%v: %s); %s", err, out, installHint)
		}
		runSuite(t, packageEnv(binDir), "/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
			"../minikafkatest/python/tests")
	})
	t.Run("@minikafka/testing", func(t *testing.T) {
		node := lookPath(t, "node")
		modules, err := filepath.Abs("node_modules")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(modules, "kafkajs")); err != nil {
			t.Fatalf("kafkajs missing (%v); %s", err, installHint)
		}
		// Files, not the directory: node 21+ reads --test arguments as globs.
		files, err := filepath.Glob("../minikafkatest/node/test/*.test.js")
		if err != nil || len(files) == 0 {
			t.Fatalf("no node tests found (%v)", err)
		}
		runSuite(t, packageEnv(binDir, "NODE_PATH="+modules), node, append([]string{"--test"}, files...)...)
	})
}

var advertisedRE = regexp.MustCompile(`advertised as ([^;,\s]+)`)

// TestStaticBinary: a CGO_ENABLED=0 build needs no dynamic loader and no
// shared library, so it runs in a FROM-scratch image, and it starts and
// serves a Kafka client.
func TestStaticBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the ELF check is for Linux builds; the image is linux only")
	}
	_, bin := buildStatic(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("binary has an ELF interpreter (PT_INTERP): it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("binary needs shared libraries %v (%v)", libs, err)
	}
	f.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-listen", "127.0.0.1:0", "-in-memory")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && sc.Scan() {
		if m := advertisedRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("the static binary printed no address (%v)", sc.Err())
	}
	go io.Copy(io.Discard, stdout)
	roundTrip(ctx, t, addr)
}

// roundTrip writes one record through addr and reads it back.
func roundTrip(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("static"),
		kgo.AllowAutoTopicCreation(), kgo.MetadataMinAge(100*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "static", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce through %s: %v", addr, err)
	}
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record read back through %s: %v", addr, err)
		}
		if recs := fs.Records(); len(recs) > 0 {
			if string(recs[0].Value) != "v" {
				t.Fatalf("read %q, want v", recs[0].Value)
			}
			return
		}
	}
}

// TestDockerImage builds the Dockerfile's image from a CGO_ENABLED=0 binary
// and runs a Kafka client against a container of it. It needs a Docker
// daemon, and is skipped (saying so) on a machine without one.
func TestDockerImage(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("docker is not on PATH: the image is built where Docker is installed")
	}
	if out, err := exec.Command(docker, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("docker is installed but its daemon does not answer (%v): %s", err, lastLines(string(out), 2))
	}
	dir, _ := buildStatic(t)
	for _, name := range []string{"Dockerfile", ".dockerignore"} {
		b, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tag := fmt.Sprintf("minikafka-compat-test:%d", time.Now().UnixNano())
	if out, err := exec.CommandContext(ctx, docker, "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(docker, "rmi", "-f", tag).Run() })
	out, err := exec.CommandContext(ctx, docker, "image", "inspect", "-f", "{{.Size}}", tag).Output()
	if err != nil {
		t.Fatalf("docker image inspect: %v", err)
	}
	if size, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err != nil || size > 100<<20 {
		t.Errorf("image size %s (%v): want the binary alone, under 100 MiB", out, err)
	}

	// The client dials what the broker advertises: the published host port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	out, err = exec.CommandContext(ctx, docker, "run", "-d", "--rm", "-p", fmt.Sprintf("%s:9092", addr), tag,
		"-advertise", addr).CombinedOutput()
	if err != nil {
		t.Fatalf("docker run: %v\n%s", err, out)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command(docker, "logs", id).CombinedOutput()
			t.Logf("container log:\n%s", logs)
		}
		exec.Command(docker, "rm", "-f", id).Run()
	})
	roundTrip(ctx, t, addr)
}

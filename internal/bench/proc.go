package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Cmd is how to start one broker: the program, fixed arguments and extra
// environment. The harness appends its own flags (see startBroker).
type Cmd struct {
	Path string
	Args []string
	Env  []string
}

// proc is a running broker process.
type proc struct {
	name    string
	cmd     *exec.Cmd
	addr    string
	dataDir string
	stderr  *tailBuffer
	done    chan struct{}
	startup time.Duration // fork to first answered Metadata
	cg      *cpuGroup     // nil: CPU in /proc's 10 ms ticks
}

// cpuSource says how the last started broker's CPU is counted, for the
// scenario's summary line.
var cpuSource atomic.Value // string

// addrRE finds a broker's first address in its start line; a binary with
// several nodes or listeners names each as SCHEME://host:port first.
var addrRE = regexp.MustCompile(`advertised as ([^;,\s]+)|listening on (?:[A-Z_]+://)?([^;,\s(]+)`)

// startProc starts argv, waits for its "listening on" line and times the
// first Metadata answer.
func startProc(ctx context.Context, name string, c Cmd, args []string, dataDir string) (*proc, error) {
	cmd := exec.Command(c.Path, append(append([]string{}, c.Args...), args...)...)
	cmd.Env = append(os.Environ(), c.Env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, dataDir: dataDir, stderr: &tailBuffer{max: 4096}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if g, err := newCPUGroup(cmd.Process.Pid); err == nil {
		p.cg = g
		cpuSource.Store("a cpu accounting cgroup per broker (ns)")
	} else {
		cpuSource.Store(fmt.Sprintf("/proc/<pid>/stat in 10 ms ticks (no accounting cgroup: %.120v)", err))
	}
	go func() {
		cmd.Wait()
		if p.cg != nil {
			p.cg.remove()
		}
		close(p.done)
	}()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); !found && m != nil {
				found = true
				addrc <- m[1] + m[2]
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case p.addr = <-addrc:
	case <-p.done:
		return nil, fmt.Errorf("%s exited before listening: %s", name, p.stderr.String())
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s did not report its address within 60 s: %s", name, p.stderr.String())
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		p.stop()
		return nil, err
	}
	defer cl.Close()
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := cl.Request(mctx, kmsg.NewPtrMetadataRequest()); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: first Metadata: %w", name, err)
	}
	p.startup = time.Since(t0)
	return p, nil
}

// stop ends the process with SIGTERM (a clean close that flushes), killing
// it if it has not exited within 30 s.
func (p *proc) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within 30 s of SIGTERM; killed", p.name)
	}
}

// clockTick is USER_HZ; 100 on every Linux platform Go supports.
const clockTick = 100

// cpu is the CPU time the process has used: its accounting group's usage
// where it has one, else utime+stime from /proc/<pid>/stat.
func (p *proc) cpu() (time.Duration, error) {
	if p.cg != nil {
		return p.cg.usage()
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces; fields after it are
	// plain. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("bad /proc stat times")
	}
	return time.Duration(u+s) * time.Second / clockTick, nil
}

// rss is VmRSS in bytes.
func (p *proc) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no VmRSS")
}

// tailBuffer keeps the last max bytes written (a child's stderr, for error
// messages).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

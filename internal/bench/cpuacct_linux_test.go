package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The accounting group counts what /proc counts, with the threads of the
// process and its children, to better than a tick.
func TestCPUGroupCountsTheProcess(t *testing.T) {
	// A shell spinning on builtins only (no children, which /proc's figure
	// would leave out), then waiting to be read.
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done; exec sleep 30`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	g, err := newCPUGroup(cmd.Process.Pid)
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("root, yet no accounting group: %v", err)
		}
		t.Skipf("no cpu accounting group can be made here (not root): %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); g.remove(); assertGone(t, g.dir) }()
	time.Sleep(2500 * time.Millisecond)
	p := &proc{cmd: cmd}
	ticks, err := p.cpu() // p.cg is nil: /proc's ticks
	if err != nil {
		t.Fatal(err)
	}
	used, err := g.usage()
	if err != nil {
		t.Fatal(err)
	}
	// The group joined just after the fork and misses only the shell's
	// first instants; /proc truncates to its 10 ms ticks.
	if used < 100*time.Millisecond || used > ticks+20*time.Millisecond || used < ticks-20*time.Millisecond {
		t.Fatalf("group counted %v, /proc %v", used, ticks)
	}
	t.Logf("group %v, /proc %v", used, ticks)
}

func assertGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("accounting group %s left behind (%v)", dir, err)
	}
}

// A hierarchy where the new group's usage cannot be read (here a plain
// directory that looks like cgroup v1's cpuacct root): newCPUGroup fails,
// leaves no group behind and moves nothing, so the harness counts /proc's
// ticks instead. With no hierarchy at all it says so.
func TestCPUGroupFailsClean(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cpuacct.usage"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := cgroupRoots
	defer func() { cgroupRoots = saved }()
	cgroupRoots = []cgroupRoot{{root, false}}
	if g, err := newCPUGroup(os.Getpid()); err == nil {
		t.Fatalf("a group whose usage cannot be read: %+v, want an error", g)
	}
	left, err := filepath.Glob(filepath.Join(root, "mkbench-*"))
	if err != nil || len(left) != 0 {
		t.Fatalf("groups left behind: %v (%v)", left, err)
	}

	cgroupRoots = nil
	if _, err := newCPUGroup(os.Getpid()); err == nil || !strings.Contains(err.Error(), "no cgroup hierarchy") {
		t.Fatalf("no hierarchy: %v", err)
	}
}

package bench

import (
	"os"
	"os/exec"
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

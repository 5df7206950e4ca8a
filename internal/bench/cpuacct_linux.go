package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A broker's CPU read from /proc/<pid>/stat comes in 10 ms ticks, and a
// consume run of a few hundred MiB costs 10–45 of them: one tick is 2–10 %
// of the figure. A cpu accounting cgroup per broker counts every thread the
// process ever ran, exited ones included, in nanoseconds. It needs write
// access to the cgroup filesystem (root here); without it the harness falls
// back to the ticks and says so.

// cgroupRoots are the places a per-process accounting group can be made:
// cgroup v1's cpuacct hierarchy (usage in cpuacct.usage, ns) and a cgroup v2
// hierarchy (usage_usec in cpu.stat).
var cgroupRoots = []cgroupRoot{
	{"/sys/fs/cgroup/cpuacct", false},
	{"/sys/fs/cgroup", true},
	{"/sys/fs/cgroup/unified", true},
}

// cgroupRoot is a hierarchy's mount point and its version.
type cgroupRoot struct {
	dir string
	v2  bool
}

// cpuGroup is one process's accounting group.
type cpuGroup struct {
	dir string
	v2  bool
}

// newCPUGroup moves pid (every thread of it) into a new accounting group.
func newCPUGroup(pid int) (*cpuGroup, error) {
	var errs []error
	for _, r := range cgroupRoots {
		if r.v2 {
			if _, err := os.Stat(filepath.Join(r.dir, "cgroup.controllers")); err != nil {
				continue
			}
		} else if _, err := os.Stat(filepath.Join(r.dir, "cpuacct.usage")); err != nil {
			continue
		}
		dir := filepath.Join(r.dir, fmt.Sprintf("mkbench-%d-%d", os.Getpid(), pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		// The usage is read before pid moves in: a group that cannot be
		// read is still empty, so it can be removed, and the process
		// stays where it was.
		g := &cpuGroup{dir: dir, v2: r.v2}
		if _, err := g.usage(); err != nil {
			os.Remove(dir)
			errs = append(errs, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			os.Remove(dir)
			errs = append(errs, err)
			continue
		}
		return g, nil
	}
	if len(errs) == 0 {
		return nil, errors.New("no cgroup hierarchy with cpu accounting is mounted")
	}
	return nil, errors.Join(errs...)
}

// usage is the CPU time every thread of the group has used.
func (g *cpuGroup) usage() (time.Duration, error) {
	if !g.v2 {
		b, err := os.ReadFile(filepath.Join(g.dir, "cpuacct.usage"))
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(ns), err
	}
	b, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return time.Duration(us) * time.Microsecond, err
		}
	}
	return 0, errors.New("no usage_usec in " + g.dir + "/cpu.stat")
}

// remove deletes the group once its process has exited (a group with
// members cannot be removed; the kernel drops them as they exit).
func (g *cpuGroup) remove() {
	for i := 0; i < 50; i++ {
		if err := os.Remove(g.dir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

//go:build !linux

package bench

import (
	"errors"
	"time"
)

type cpuGroup struct{}

func newCPUGroup(pid int) (*cpuGroup, error) {
	return nil, errors.New("cpu accounting groups are Linux only")
}

func (g *cpuGroup) usage() (time.Duration, error) { return 0, errors.New("unsupported") }
func (g *cpuGroup) remove()                       {}

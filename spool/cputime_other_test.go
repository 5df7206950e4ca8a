//go:build !unix

package spool

import "time"

func processCPU() time.Duration { return 0 }

// Command writefloor measures what the kernel alone charges for appending
// to many files at once, with no broker: the floor under minikafka's
// 1000-partition produce figure (mkbench's produce-1k-1000p scenario), where
// each partition batch is one pwrite(2) to its partition's segment file.
//
// It appends -total bytes in -chunk sized writes, round robin over each
// count of -files, to files in -dir, with pwrite or by copying into a
// shared mapping of the file (sized up front, with -fallocate or as a
// sparse file), and prints its own CPU (utime+stime from getrusage) per
// write and per GiB. The same bytes in the same chunks cost more over more
// files: that part of the per-partition cost is the kernel's.
//
//	go run ./internal/bench/cmd/writefloor -files 8,1000 -chunk 4096,16384
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	dir := flag.String("dir", "", "directory for the files (default: a new one under the temp dir)")
	filesFlag := flag.String("files", "8,1000", "comma-separated file counts")
	chunkFlag := flag.String("chunk", "4096,16384", "comma-separated write sizes in bytes")
	total := flag.Int64("total", 256<<20, "bytes written per measurement")
	rounds := flag.Int("rounds", 2, "times each measurement is repeated (alternating)")
	mmap := flag.Bool("mmap", false, "also copy into shared mappings (sparse and fallocated) instead of pwrite")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "writefloor")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	files, chunks := ints(*filesFlag), ints(*chunkFlag)
	modes := []string{"pwrite"}
	if *mmap {
		modes = append(modes, "mmap-sparse", "mmap-fallocate")
	}
	for r := 0; r < *rounds; r++ {
		for _, mode := range modes {
			for _, chunk := range chunks {
				for _, n := range files {
					cpu, writes := measure(filepath.Join(*dir, "d"), mode, n, chunk, *total)
					fmt.Printf("%-14s files=%5d chunk=%6d writes=%7d cpu=%6v  %.2f µs/write  %.2f CPU-s/GiB\n",
						mode, n, chunk, writes, cpu.Round(time.Millisecond), float64(cpu.Nanoseconds())/1e3/float64(writes),
						cpu.Seconds()/(float64(*total)/(1<<30)))
				}
			}
		}
	}
}

// measure appends total bytes in chunk-sized writes round robin over n new
// files and returns the CPU it took and the number of writes.
func measure(dir, mode string, n, chunk int, total int64) (time.Duration, int64) {
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	per := (total/int64(n) + int64(chunk) + 4095) &^ 4095
	fds := make([]int, n)
	maps := make([][]byte, n)
	for i := range fds {
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		fds[i] = int(f.Fd())
		switch mode {
		case "mmap-sparse":
			err = f.Truncate(per)
		case "mmap-fallocate":
			err = syscall.Fallocate(fds[i], 0, 0, per)
		}
		if err != nil {
			fail(err)
		}
		if mode != "pwrite" {
			m, err := syscall.Mmap(fds[i], 0, int(per), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			if err != nil {
				fail(err)
			}
			defer syscall.Munmap(m)
			maps[i] = m
		}
	}
	buf := make([]byte, chunk)
	for i := range buf {
		buf[i] = byte(i)
	}
	offs := make([]int64, n)
	writes := total / int64(chunk)
	c0 := cpuNow()
	for k := int64(0); k < writes; k++ {
		i := int(k % int64(n))
		if mode == "pwrite" {
			if _, err := syscall.Pwrite(fds[i], buf, offs[i]); err != nil {
				fail(err)
			}
		} else {
			copy(maps[i][offs[i]:], buf)
		}
		offs[i] += int64(chunk)
	}
	return cpuNow() - c0, writes
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			fail(fmt.Errorf("%q is not a positive number", f))
		}
		out = append(out, v)
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "writefloor:", err)
	os.Exit(1)
}

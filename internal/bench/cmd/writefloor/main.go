// Command writefloor measures what the kernel alone charges for appending
// to many files at once, with no broker: the floor under minikafka's
// 1000-partition produce figure (mkbench's produce-1k-1000p scenario), where
// each partition batch is one pwrite(2) to its partition's segment file.
//
// It appends -total bytes in -chunk sized writes, round robin over each
// count of -files, to files in -dir, with pwrite or by copying into a
// shared mapping of the file (-mmap: sized up front, fallocated or as a
// sparse file), and prints its own CPU (utime+stime from getrusage) per
// write and per GiB. The same bytes in the same chunks cost more over more
// files: that part of the per-partition cost is the kernel's.
//
// -presize adds pwrite into files whose blocks or size are set before the
// writes: sparse (ftruncate), fallocated, fallocated beyond the end
// (FALLOC_FL_KEEP_SIZE, the file's size still grows with each write), and
// reserved 1 MiB ahead of the end as the file grows, as a log could.
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
	presize := flag.Bool("presize", false, "also pwrite into files sized up front (sparse and fallocated), so no write extends a file")
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
	if *presize {
		modes = append(modes, "pwrite-sparse", "pwrite-fallocate", "pwrite-keepsize", "pwrite-ahead")
	}
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
		case "mmap-sparse", "pwrite-sparse":
			err = f.Truncate(per)
		case "mmap-fallocate", "pwrite-fallocate":
			err = syscall.Fallocate(fds[i], 0, 0, per)
		case "pwrite-keepsize":
			err = syscall.Fallocate(fds[i], 1, 0, per) // FALLOC_FL_KEEP_SIZE
		}
		if err != nil {
			fail(err)
		}
		if strings.HasPrefix(mode, "mmap") {
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
	ahead := make([]int64, n)
	writes := total / int64(chunk)
	c0 := cpuNow()
	for k := int64(0); k < writes; k++ {
		i := int(k % int64(n))
		if mode == "pwrite-ahead" && offs[i]+int64(chunk) > ahead[i] {
			// Reserve the next 1 MiB beyond the end, as a log could
			// while it grows, without changing the file's size.
			if err := syscall.Fallocate(fds[i], 1, ahead[i], 1<<20); err != nil {
				fail(err)
			}
			ahead[i] += 1 << 20
		}
		if strings.HasPrefix(mode, "pwrite") {
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

// Command producefloor measures what this machine charges a receiver for
// the kernel and CRC work every produce costs, with no broker: read a
// stream of frames from loopback TCP, check a CRC32C over each (as a
// broker checks every batch), and append it to a file in the page cache
// (durability never). It is the floor under minikafka's produce
// CPU-s/GiB figure (mkbench's produce scenarios), as sendfilefloor is for
// consume.
//
// A child process writes -frame-byte frames as fast as the receiver takes
// them; the receiver prints its own CPU (utime+stime from getrusage, the
// child excluded) per GiB. -crc=false and -write=false take those steps
// out, to see what each costs.
//
//	go run ./internal/bench/cmd/producefloor
package main

import (
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		child()
		return
	}
	mib := flag.Int64("mib", 1024, "MiB to receive")
	frame := flag.Int("frame-bytes", 1<<20, "bytes per frame (a produce request)")
	doCRC := flag.Bool("crc", true, "CRC32C each frame")
	doWrite := flag.Bool("write", true, "append each frame to a file")
	dir := flag.String("dir", "", "directory for the file (default: a new temp dir)")
	flag.Parse()

	if *dir == "" {
		d, err := os.MkdirTemp("", "producefloor")
		fail(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	f, err := os.Create(filepath.Join(*dir, "log"))
	fail(err)
	defer f.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	fail(err)
	exe, err := os.Executable()
	fail(err)
	cmd := exec.Command(exe, "-child", ln.Addr().String(), fmt.Sprint(*frame))
	cmd.Stderr = os.Stderr
	fail(cmd.Start())
	conn, err := ln.Accept()
	fail(err)

	buf := make([]byte, *frame)
	var before, after syscall.Rusage
	fail(syscall.Getrusage(syscall.RUSAGE_SELF, &before))
	start := time.Now()
	var got, off int64
	var sum uint32
	for got < *mib<<20 {
		_, err := io.ReadFull(conn, buf)
		fail(err)
		if *doCRC {
			sum += crc32.Checksum(buf, castagnoli)
		}
		if *doWrite {
			_, err := f.WriteAt(buf, off)
			fail(err)
			off += int64(len(buf))
		}
		got += int64(len(buf))
	}
	elapsed := time.Since(start)
	fail(syscall.Getrusage(syscall.RUSAGE_SELF, &after))
	conn.Close()
	cmd.Wait()
	user := time.Duration(syscall.TimevalToNsec(after.Utime) - syscall.TimevalToNsec(before.Utime))
	sys := time.Duration(syscall.TimevalToNsec(after.Stime) - syscall.TimevalToNsec(before.Stime))
	gib := float64(got) / (1 << 30)
	fmt.Printf("frame %d B, crc %v, write %v: %.0f MiB/s, receiver CPU %.3f s/GiB (user %.3f, sys %.3f) [%08x]\n",
		*frame, *doCRC, *doWrite, float64(got)/(1<<20)/elapsed.Seconds(),
		(user+sys).Seconds()/gib, user.Seconds()/gib, sys.Seconds()/gib, sum)
}

// child sends frames until the receiver hangs up, computing a CRC over
// each as a producer does.
func child() {
	var size int
	fmt.Sscan(os.Args[3], &size)
	conn, err := net.Dial("tcp", os.Args[2])
	fail(err)
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for {
		crc32.Checksum(buf, castagnoli)
		if _, err := conn.Write(buf); err != nil {
			return
		}
	}
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "producefloor:", err)
		os.Exit(1)
	}
}

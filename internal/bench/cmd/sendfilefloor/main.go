// Command sendfilefloor measures what the kernel alone charges a sender for
// sendfile(2) over loopback TCP, with no broker: the floor under
// minikafka's consume CPU-s/GiB figure (mkbench's consume scenario).
//
// It sends one page-cached file repeatedly to a child process in either of
// two patterns:
//
//	-pattern stream   the child reads continuously
//	-pattern fetch    the child asks for -response bytes, reads them all,
//	                  then works for -think before asking again, as a
//	                  consumer's fetch loop does
//
// and prints the sender's own CPU (utime+stime from getrusage, the child
// excluded) per GiB sent. On loopback the receiving side's TCP work runs
// partly in the sender's context, so the pattern changes the figure.
//
//	go run ./internal/bench/cmd/sendfilefloor -pattern fetch
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		child()
		return
	}
	mib := flag.Int64("mib", 2048, "MiB to send in all")
	fileMiB := flag.Int64("file-mib", 512, "size of the page-cached file sent over and over")
	pattern := flag.String("pattern", "fetch", "stream or fetch")
	response := flag.Int64("response", 8<<20, "bytes per response (fetch pattern)")
	think := flag.Duration("think", 5*time.Millisecond, "child's work per response (fetch pattern)")
	sndbuf := flag.Int("sndbuf", 0, "SO_SNDBUF for the sending socket (0: kernel autotuning)")
	flag.Parse()
	if *pattern != "stream" && *pattern != "fetch" {
		fail(fmt.Errorf("-pattern %q: want stream or fetch", *pattern))
	}
	if *pattern == "stream" {
		*response = *fileMiB << 20
	}

	dir, err := os.MkdirTemp("", "sendfilefloor")
	fail(err)
	defer os.RemoveAll(dir)
	f, err := makeFile(filepath.Join(dir, "data"), *fileMiB<<20)
	fail(err)
	defer f.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	fail(err)
	exe, err := os.Executable()
	fail(err)
	cmd := exec.Command(exe, "-child", ln.Addr().String(), *pattern, fmt.Sprint(*response), think.String())
	cmd.Stderr = os.Stderr
	fail(cmd.Start())
	nc, err := ln.Accept()
	fail(err)
	conn := nc.(*net.TCPConn)
	if *sndbuf > 0 {
		fail(conn.SetWriteBuffer(*sndbuf))
	}
	raw, err := conn.SyscallConn()
	fail(err)

	var before, after syscall.Rusage
	fail(syscall.Getrusage(syscall.RUSAGE_SELF, &before))
	start := time.Now()
	total := *mib << 20
	size := *fileMiB << 20
	var sent, pos int64
	for sent < total {
		if *pattern == "fetch" {
			var ask [1]byte
			_, err := io.ReadFull(conn, ask[:])
			fail(err)
		}
		// One response: *response bytes, wrapping around the file.
		left := min(*response, total-sent)
		for left > 0 {
			if pos == size {
				pos = 0
			}
			n := min(left, size-pos)
			fail(sendfile(raw, f, &pos, n))
			left -= n
			sent += n
		}
	}
	fail(conn.Close())
	fail(cmd.Wait())
	elapsed := time.Since(start)
	fail(syscall.Getrusage(syscall.RUSAGE_SELF, &after))
	cpu := time.Duration(syscall.TimevalToNsec(after.Utime) - syscall.TimevalToNsec(before.Utime) +
		syscall.TimevalToNsec(after.Stime) - syscall.TimevalToNsec(before.Stime))
	gib := float64(total) / (1 << 30)
	fmt.Printf("pattern %s, response %d B, think %v, sndbuf %d: %.0f MiB/s, sender CPU %.3f s/GiB\n",
		*pattern, *response, *think, *sndbuf, float64(total)/(1<<20)/elapsed.Seconds(), cpu.Seconds()/gib)
}

func sendfile(raw syscall.RawConn, f *os.File, pos *int64, n int64) error {
	var serr error
	err := raw.Write(func(fd uintptr) bool {
		for n > 0 {
			m, e := syscall.Sendfile(int(fd), int(f.Fd()), pos, int(n))
			if m > 0 {
				n -= int64(m)
			}
			switch {
			case e == syscall.EAGAIN:
				return false
			case e == syscall.EINTR:
			case e != nil:
				serr = e
				return true
			case m == 0:
				serr = io.ErrUnexpectedEOF
				return true
			}
		}
		return true
	})
	if serr != nil {
		return serr
	}
	return err
}

// makeFile writes size bytes and reads them back so they are in the page
// cache, as a consumer's recent data is.
func makeFile(path string, size int64) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for w := int64(0); w < size; w += int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), size-w)]); err != nil {
			return nil, err
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := io.CopyBuffer(io.Discard, f, buf); err != nil {
		return nil, err
	}
	return f, nil
}

func child() {
	addr, pattern := os.Args[2], os.Args[3]
	var response int64
	fmt.Sscan(os.Args[4], &response)
	think, err := time.ParseDuration(os.Args[5])
	fail(err)
	conn, err := net.Dial("tcp", addr)
	fail(err)
	if pattern == "stream" {
		_, err := io.CopyBuffer(io.Discard, conn, make([]byte, 1<<20))
		fail(err)
		return
	}
	buf := make([]byte, response)
	for {
		if _, err := conn.Write([]byte{1}); err != nil {
			return // the sender is done and closed
		}
		if _, err := io.ReadFull(conn, buf); err != nil {
			return
		}
		for t := time.Now(); time.Since(t) < think; {
			// busy, as a consumer decoding records is
		}
	}
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sendfilefloor:", err)
		os.Exit(1)
	}
}

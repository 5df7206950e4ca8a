// Command rawproduce measures a broker binary's CPU per GiB of produce with
// no client library in the way: it starts each binary given (alternating,
// -runs times), creates an 8-partition topic, and sends prebuilt Produce
// requests (v9, acks=1, one batch of 1 KiB records per partition, the size
// of kgo's requests) over two connections, pipelined, then reads the
// broker's utime+stime from /proc. kgo's own CPU, which on two cores
// competes with the broker in mkbench's produce scenarios, is gone, so
// this A/B resolves changes on the broker's produce path that mkbench
// cannot.
//
//	go run ./internal/bench/cmd/rawproduce -mib 1024 -runs 5 /tmp/old-minikafka /tmp/new-minikafka
//
// A binary named BIN@quota is BIN with client quotas set before the run
// (producer_byte_rate and request_percentage for the default user and
// client ID, too high to throttle), so "BIN BIN@quota" measures what quota
// bookkeeping costs the produce path. BIN@acls is BIN with the authorizer
// on (-authorizer -allow-everyone-if-no-acl-found) and 1000 ACLs, two of
// which let the anonymous client write the topic and the rest name other
// principals, topics, prefixes and groups, so "BIN BIN@acls" measures what
// authorization costs it. Every run checks that the records were stored.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

func main() {
	mib := flag.Int("mib", 1024, "MiB to produce per run")
	runs := flag.Int("runs", 5, "runs per binary")
	batchKiB := flag.Int("batch-kib", 768, "KiB per partition batch (8 partitions per request)")
	flag.Func("broker-arg", "extra `flag` for every broker process (repeatable; e.g. -broker-arg=-cpuprofile=/tmp/p-%p.pprof with cmd/mkprof)", func(v string) error {
		brokerArgs = append(brokerArgs, v)
		return nil
	})
	flag.Parse()
	bins := flag.Args()
	if len(bins) == 0 {
		fail(fmt.Errorf("usage: rawproduce [flags] minikafka-binary..."))
	}
	req := buildRequest(*batchKiB)
	recsPerReq := int64(8 * *batchKiB)
	results := make([][]float64, len(bins))
	for r := range *runs {
		for i, bin := range bins {
			cpu, mibps, err := run(bin, req, recsPerReq, *mib)
			fail(err)
			results[i] = append(results[i], cpu)
			fmt.Fprintf(os.Stderr, "run %d %s: %.0f MiB/s, broker %.3f CPU-s/GiB\n", r+1, bin, mibps, cpu)
		}
	}
	for i, bin := range bins {
		s := slices.Clone(results[i])
		slices.Sort(s)
		fmt.Printf("%s: median %.3f CPU-s/GiB (runs %v)\n", bin, s[len(s)/2], results[i])
	}
}

func buildRequest(batchKiB int) []byte {
	value := make([]byte, 1000)
	recs := make([]records.Record, batchKiB)
	for i := range recs {
		for j := range value {
			value[j] = byte(i*31 + j)
		}
		recs[i] = records.Record{Key: []byte(strconv.Itoa(i)), Value: append([]byte(nil), value...)}
	}
	batch, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	fail(err)
	pr := kmsg.NewPtrProduceRequest()
	pr.Version, pr.Acks, pr.TimeoutMillis = 9, 1, 30000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "raw"
	for p := range 8 {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = int32(p), batch
		tp.Partitions = append(tp.Partitions, pp)
	}
	pr.Topics = append(pr.Topics, tp)
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, 9)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = append(b, 0) // header tags
	b = pr.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

var brokerArgs []string

var addrRE = regexp.MustCompile(`advertised as ([^;,\s]+)`)

func run(bin string, req []byte, recsPerReq int64, mib int) (cpuPerGiB, mibps float64, err error) {
	bin, withQuota := strings.CutSuffix(bin, "@quota")
	bin, withACLs := strings.CutSuffix(bin, "@acls")
	dir, err := os.MkdirTemp("", "rawproduce")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	args := []string{"-listen", "127.0.0.1:0", "-data", dir, "-durability", "never", "-log-level", "warn"}
	if withACLs {
		args = append(args, "-authorizer", "-allow-everyone-if-no-acl-found")
	}
	args = append(args, brokerArgs...)
	cmd := exec.Command(bin, args...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		// A clean stop, so a profiling build (cmd/mkprof) writes its profile.
		cmd.Process.Signal(syscall.SIGTERM)
		t := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
		cmd.Wait()
		t.Stop()
	}()
	sc := bufio.NewScanner(out)
	addr := ""
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	go io.Copy(io.Discard, out)
	if addr == "" {
		return 0, 0, fmt.Errorf("%s printed no address", bin)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, 0, err
	}
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 8, 1, nil, "raw"); err != nil {
		return 0, 0, err
	}
	if withQuota {
		res, err := kadm.NewClient(cl).AlterClientQuotas(context.Background(), []kadm.AlterClientQuotaEntry{{
			Entity: kadm.ClientQuotaEntity{{Type: "user"}, {Type: "client-id"}},
			Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1e15}, {Key: "request_percentage", Value: 1e9}},
		}})
		if err == nil && res[0].Err != nil {
			err = res[0].Err
		}
		if err != nil {
			return 0, 0, fmt.Errorf("setting quotas: %w", err)
		}
	}
	if withACLs {
		if err := createACLs(cl); err != nil {
			return 0, 0, fmt.Errorf("creating ACLs: %w", err)
		}
	}

	perConn := (mib << 20) / len(req) / 2
	before, err := procCPU(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- sendAll(addr, req, perConn)
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil {
			return 0, 0, e
		}
	}
	elapsed := time.Since(start)
	after, err := procCPU(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	// The answers are not decoded while sending; a refused request would
	// look fast, so count what was stored.
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), "raw")
	if err != nil {
		return 0, 0, err
	}
	var stored int64
	ends.Each(func(o kadm.ListedOffset) { stored += o.Offset })
	if want := int64(2*perConn) * recsPerReq; stored != want {
		return 0, 0, fmt.Errorf("%s stored %d records of %d", bin, stored, want)
	}
	cl.Close()
	gib := float64(2*perConn*len(req)) / (1 << 30)
	return (after - before).Seconds() / gib, gib * 1024 / elapsed.Seconds(), nil
}

// createACLs makes the 1000 ACLs of BIN@acls in one CreateAcls request:
// one rewrite of the ACL file, so its writeback does not overlap the run.
func createACLs(cl *kgo.Client) error {
	req := kmsg.NewPtrCreateACLsRequest()
	add := func(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, host, op, perm
		req.Creations = append(req.Creations, c)
	}
	for _, op := range []kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationRead} {
		add(kmsg.ACLResourceTypeTopic, "raw", kmsg.ACLResourcePatternTypeLiteral, "User:ANONYMOUS", "*", op, kmsg.ACLPermissionTypeAllow)
	}
	for i := range 998 {
		u := fmt.Sprintf("User:u%d", i%50)
		switch i % 4 {
		case 0:
			add(kmsg.ACLResourceTypeTopic, fmt.Sprintf("other-%d", i), kmsg.ACLResourcePatternTypeLiteral, u, "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow)
		case 1:
			add(kmsg.ACLResourceTypeTopic, fmt.Sprintf("p%d-", i), kmsg.ACLResourcePatternTypePrefixed, u, "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow)
		case 2:
			add(kmsg.ACLResourceTypeGroup, fmt.Sprintf("g-%d", i), kmsg.ACLResourcePatternTypeLiteral, u, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)
		case 3:
			add(kmsg.ACLResourceTypeTopic, fmt.Sprintf("d%d-", i), kmsg.ACLResourcePatternTypePrefixed, u, "10.9.9.9", kmsg.ACLOperationAll, kmsg.ACLPermissionTypeDeny)
		}
	}
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return err
		}
	}
	if len(resp.Results) != 1000 {
		return fmt.Errorf("%d results, want 1000", len(resp.Results))
	}
	return nil
}

// sendAll writes n requests, at most 4 unanswered, and reads the answers.
func sendAll(addr string, req []byte, n int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	sem := make(chan struct{}, 4)
	done := make(chan error, 1)
	go func() {
		br := bufio.NewReader(c)
		var sz [4]byte
		for range n {
			if _, err := io.ReadFull(br, sz[:]); err != nil {
				done <- err
				return
			}
			if _, err := br.Discard(int(binary.BigEndian.Uint32(sz[:]))); err != nil {
				done <- err
				return
			}
			<-sem
		}
		done <- nil
	}()
	for range n {
		sem <- struct{}{}
		if _, err := c.Write(req); err != nil {
			return err
		}
	}
	return <-done
}

// procCPU is a process's utime+stime.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "rawproduce:", err)
		os.Exit(1)
	}
}

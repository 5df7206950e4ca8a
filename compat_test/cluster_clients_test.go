package compat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	kafkago "github.com/segmentio/kafka-go"
)

// The clients' runs for TestClusterClients (cluster_test.go).

func init() {
	clusterCases = append(clusterCases,
		clusterCase{name: "sarama", start: startSaramaRun, idempotent: true,
			fresh: func(t *testing.T, addrs []string) groupConsumer { return &saramaClient{addrs} }},
		// kafka-go has no idempotent producer: its writer, acks=all, retrying.
		clusterCase{name: "kafka-go", start: startKafkaGoRun,
			fresh: func(t *testing.T, addrs []string) groupConsumer { return &kafkaGoClient{addrs} }},
		clusterCase{name: "confluent-kafka-go", start: startConfluentRun, idempotent: true,
			fresh: func(t *testing.T, addrs []string) groupConsumer { return &confluentClient{addrs} }},
		clusterCase{name: "kcat", start: startKcatRun, idempotent: true,
			fresh: func(t *testing.T, addrs []string) groupConsumer {
				c, _ := newKcatClient(t, addrs)
				return c.(*kcatClient)
			}},
		clusterCase{name: "confluent-kafka-python", start: scriptRunStarter("/usr/bin/python3", "confluent_client.py"), idempotent: true,
			fresh: func(t *testing.T, addrs []string) groupConsumer {
				return newScriptClient(t, addrs, "/usr/bin/python3", "confluent_client.py")
			}},
		clusterCase{name: "kafkajs", start: scriptRunStarter("node", "kafkajs_client.js"), idempotent: true,
			fresh: func(t *testing.T, addrs []string) groupConsumer {
				return newScriptClient(t, addrs, "node", "kafkajs_client.js")
			}},
		clusterCase{name: "java", start: startJavaRun, idempotent: true,
			fresh: func(t *testing.T, addrs []string) groupConsumer { return javaGroupClient{addrs} }},
	)
}

// runTally is what an in-process run collects: acknowledgements by send
// index, records as the consumer read them, and how many it must read.
type runTally struct {
	mu       sync.Mutex
	acked    map[int]rec
	errs     []error
	consumed []rec
	target   int // -1 until the producer is done
}

func newRunTally() *runTally { return &runTally{acked: map[int]rec{}, target: -1} }

func (r *runTally) ack(i int, x rec) {
	r.mu.Lock()
	r.acked[i] = x
	r.mu.Unlock()
}

func (r *runTally) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *runTally) read(x rec) {
	r.mu.Lock()
	r.consumed = append(r.consumed, x)
	r.mu.Unlock()
}

// full: the consumer has read as many records as were acknowledged.
func (r *runTally) full() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.target >= 0 && len(r.consumed) >= r.target
}

// producerDone fixes the consumer's target and returns the acknowledged
// records in send order.
func (r *runTally) producerDone() ([]rec, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	idx := make([]int, 0, len(r.acked))
	for i := range r.acked {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]rec, 0, len(idx))
	for _, i := range idx {
		out = append(out, r.acked[i])
	}
	r.target = len(out)
	if len(r.errs) > 0 {
		return out, fmt.Errorf("producer: %d errors, first %v", len(r.errs), r.errs[0])
	}
	return out, nil
}

func (r *runTally) waitFull(d time.Duration) []rec {
	for end := time.Now().Add(d); !r.full() && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rec(nil), r.consumed...)
}

func strRec(p int32, o int64, ts time.Time, k, v []byte) rec {
	r := rec{P: p, O: o, TS: ts.UnixMilli()}
	if k != nil {
		r.K = sp(string(k))
	}
	if v != nil {
		r.V = sp(string(v))
	}
	return r
}

// sarama: an idempotent AsyncProducer and a ConsumerGroup marking each
// record (auto commit).

type saramaRun struct {
	topic    string
	tally    *runTally
	n        int
	prod     sarama.AsyncProducer
	prodDone chan struct{}
	cg       sarama.ConsumerGroup
	h        *saramaRunHandler
	cancel   context.CancelFunc
	consDone chan error
}

type saramaRunHandler struct{ tally *runTally }

func (h *saramaRunHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaRunHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaRunHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.tally.read(strRec(m.Partition, m.Offset, m.Timestamp, m.Key, m.Value))
		s.MarkMessage(m, "")
	}
	return nil
}

func startSaramaRun(t *testing.T, addrs []string, topic, group string) clusterRun {
	pc := saramaConfig()
	pc.Producer.Idempotent = true
	pc.Net.MaxOpenRequests = 1
	pc.Producer.RequiredAcks = sarama.WaitForAll
	pc.Producer.Return.Successes = true
	pc.Producer.Partitioner = sarama.NewManualPartitioner
	pc.Producer.Retry.Max = 50
	pc.Producer.Retry.Backoff = 50 * time.Millisecond
	prod, err := sarama.NewAsyncProducer(addrs, pc)
	if err != nil {
		t.Fatal(err)
	}
	r := &saramaRun{topic: topic, tally: newRunTally(), prod: prod, prodDone: make(chan struct{}), consDone: make(chan error, 1)}
	go func() {
		defer close(r.prodDone)
		succ, errs := prod.Successes(), prod.Errors()
		for succ != nil || errs != nil {
			select {
			case m, ok := <-succ:
				if !ok {
					succ = nil
					continue
				}
				k, _ := m.Key.Encode()
				v, _ := m.Value.Encode()
				x := strRec(m.Partition, m.Offset, time.Time{}, k, v)
				x.TS = -1
				r.tally.ack(m.Metadata.(int), x)
			case e, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				r.tally.fail(e)
			}
		}
	}()

	cc := saramaConfig()
	cc.Consumer.Offsets.Initial = sarama.OffsetOldest
	// Sarama's default auto commit: marked offsets are committed every
	// second and, retrying, when the group closes.
	cc.Consumer.MaxWaitTime = 100 * time.Millisecond
	r.cg, err = sarama.NewConsumerGroup(addrs, group, cc)
	if err != nil {
		t.Fatal(err)
	}
	r.h = &saramaRunHandler{tally: r.tally}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		for ctx.Err() == nil {
			if err := r.cg.Consume(ctx, []string{topic}, r.h); err != nil && ctx.Err() == nil {
				t.Logf("sarama consume: %v", err)
				time.Sleep(100 * time.Millisecond)
			}
		}
		r.consDone <- nil
	}()
	t.Cleanup(func() { cancel(); r.cg.Close() })
	return r
}

func (r *saramaRun) send(x rec) error {
	r.prod.Input() <- &sarama.ProducerMessage{Topic: r.topic, Partition: x.P, Key: sarama.StringEncoder(*x.K),
		Value: sarama.StringEncoder(*x.V), Metadata: r.n}
	r.n++
	return nil
}

func (r *saramaRun) finish(t *testing.T) ([]rec, []rec, error) {
	r.prod.AsyncClose()
	<-r.prodDone
	acked, perr := r.tally.producerDone()
	consumed := r.tally.waitFull(30 * time.Second)
	r.cancel()
	<-r.consDone
	cerr := r.cg.Close()
	if perr != nil {
		return acked, consumed, perr
	}
	return acked, consumed, cerr
}

// kafka-go: a Writer (acks=all, retrying; one synchronous writer per
// partition keeps each partition's order) and a group Reader committing
// each record.

type kafkaGoRun struct {
	tally  *runTally
	w      *kafkago.Writer
	in     [clusterParts]chan kafkago.Message
	wg     sync.WaitGroup
	n      int
	rd     *kafkago.Reader
	cancel context.CancelFunc
	cons   chan error
}

func startKafkaGoRun(t *testing.T, addrs []string, topic, group string) clusterRun {
	r := &kafkaGoRun{tally: newRunTally(), cons: make(chan error, 1)}
	r.w = &kafkago.Writer{
		Addr: kafkago.TCP(addrs...), Topic: topic,
		// kafka-go refreshes metadata on a timer only (MetadataTTL, 6 s
		// by default), never on NOT_LEADER_OR_FOLLOWER, so its retries
		// go to the old leader until then: a second, as a kafka-go user
		// whose leaders move would set it.
		Transport:    &kafkago.Transport{MetadataTTL: time.Second},
		Balancer:     kafkago.BalancerFunc(func(m kafkago.Message, _ ...int) int { return m.Partition }),
		RequiredAcks: kafkago.RequireAll, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 50,
		WriteBackoffMin: 20 * time.Millisecond, WriteBackoffMax: 200 * time.Millisecond,
		Completion: func(ms []kafkago.Message, err error) {
			if err != nil {
				return // WriteMessages reports it
			}
			for _, m := range ms {
				x := strRec(int32(m.Partition), m.Offset, time.Time{}, m.Key, m.Value)
				x.TS = -1
				r.tally.ack(m.WriterData.(int), x)
			}
		},
	}
	for p := range r.in {
		r.in[p] = make(chan kafkago.Message, 10000)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for m := range r.in[p] {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := r.w.WriteMessages(ctx, m); err != nil {
					r.tally.fail(fmt.Errorf("record %d: %w", m.WriterData.(int), err))
				}
				cancel()
			}
		}()
	}
	r.rd = kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: addrs, GroupID: group, Topic: topic, MinBytes: 1, MaxBytes: 1 << 20,
		MaxWait: 100 * time.Millisecond, StartOffset: kafkago.FirstOffset,
		HeartbeatInterval: 500 * time.Millisecond, RebalanceTimeout: 5 * time.Second,
	})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		lastOff, refused := map[int]int64{}, map[[2]int64]bool{}
		for ctx.Err() == nil && !r.tally.full() {
			fctx, fcancel := context.WithTimeout(ctx, 200*time.Millisecond)
			m, err := r.rd.FetchMessage(fctx)
			fcancel()
			if err != nil {
				continue
			}
			// The one record whose commit was refused comes again first
			// in the next generation: kafka-go's at-least-once, not a
			// second read of anything the group had committed. Any other
			// repeat is kept, and fails the test.
			if o, ok := lastOff[m.Partition]; ok && m.Offset == o && refused[[2]int64{int64(m.Partition), o}] {
				delete(refused, [2]int64{int64(m.Partition), o})
				t.Logf("kafka-go: %d@%d, whose commit was refused, delivered again by the next generation", m.Partition, o)
				continue
			}
			lastOff[m.Partition] = m.Offset
			r.tally.read(strRec(int32(m.Partition), m.Offset, m.Time, m.Key, m.Value))
			// kafka-go ends its generation on any heartbeat error (a
			// coordinator move's NOT_COORDINATOR too) and the next one
			// starts at the committed offsets: a reader that must not
			// read a record twice commits each one before the next.
			// A commit refused (NOT_COORDINATOR while the coordinator
			// moves) is retried: the next generation takes it.
			var errs []error
			for len(errs) < 20 {
				cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
				err := r.rd.CommitMessages(cctx, m)
				ccancel()
				if err == nil {
					break
				}
				errs = append(errs, err)
				time.Sleep(100 * time.Millisecond)
			}
			if len(errs) == 20 {
				r.cons <- fmt.Errorf("commit %d@%d: %v", m.Partition, m.Offset, errs)
				return
			} else if len(errs) > 0 {
				refused[[2]int64{int64(m.Partition), m.Offset}] = true
				t.Logf("kafka-go commit %d@%d retried: %v", m.Partition, m.Offset, errs)
			}
		}
		r.cons <- nil
	}()
	t.Cleanup(func() { cancel(); r.rd.Close(); r.w.Close() })
	return r
}

func (r *kafkaGoRun) send(x rec) error {
	r.in[x.P] <- kafkago.Message{Partition: int(x.P), Key: []byte(*x.K), Value: []byte(*x.V), WriterData: r.n}
	r.n++
	return nil
}

func (r *kafkaGoRun) finish(t *testing.T) ([]rec, []rec, error) {
	for _, c := range r.in {
		close(c)
	}
	r.wg.Wait()
	acked, perr := r.tally.producerDone()
	r.tally.waitFull(30 * time.Second) // until the consumer saw every record, or the timeout
	var cerr error
	select {
	case cerr = <-r.cons: // read everything and committed it
	case <-time.After(10 * time.Second):
		cerr = fmt.Errorf("the consumer did not finish committing")
	}
	r.cancel()
	consumed := r.tally.waitFull(0)
	if err := r.rd.Close(); cerr == nil {
		cerr = err
	}
	if perr != nil {
		return acked, consumed, perr
	}
	return acked, consumed, cerr
}

// confluent-kafka-go (librdkafka): an idempotent producer and a
// subscribed consumer committing once at the end.

type confluentRun struct {
	topic  string
	tally  *runTally
	p      *kafka.Producer
	dr     chan kafka.Event
	drDone chan struct{}
	n      int
	cons   chan error
}

func startConfluentRun(t *testing.T, addrs []string, topic, group string) clusterRun {
	cc := &confluentClient{addrs}
	p, err := kafka.NewProducer(cc.conf(kafka.ConfigMap{"enable.idempotence": true, "acks": "all", "linger.ms": 5}))
	if err != nil {
		t.Fatal(err)
	}
	r := &confluentRun{topic: topic, tally: newRunTally(), p: p, dr: make(chan kafka.Event, 10000), drDone: make(chan struct{}), cons: make(chan error, 1)}
	go func() {
		for range p.Events() { // logs and errors librdkafka recovers from
		}
	}()
	go func() {
		defer close(r.drDone)
		for ev := range r.dr {
			m := ev.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				r.tally.fail(m.TopicPartition.Error)
				continue
			}
			x := strRec(m.TopicPartition.Partition, int64(m.TopicPartition.Offset), time.Time{}, m.Key, m.Value)
			x.TS = -1
			r.tally.ack(m.Opaque.(int), x)
		}
	}()
	c, err := kafka.NewConsumer(cc.conf(kafka.ConfigMap{
		"group.id": group, "enable.auto.commit": false, "auto.offset.reset": "earliest",
		"session.timeout.ms": 10000, "fetch.wait.max.ms": 100,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, nil); err != nil {
		t.Fatal(err)
	}
	go func() {
		for !r.tally.full() {
			ev := c.Poll(100)
			switch e := ev.(type) {
			case *kafka.Message:
				r.tally.read(strRec(e.TopicPartition.Partition, int64(e.TopicPartition.Offset), e.Timestamp, e.Key, e.Value))
			case kafka.Error:
				if e.IsFatal() {
					r.cons <- e
					c.Close()
					return
				}
			}
		}
		_, err := c.Commit()
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		r.cons <- err
	}()
	return r
}

func (r *confluentRun) send(x rec) error {
	r.n++
	return r.p.Produce(&kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &r.topic, Partition: x.P},
		Key:            []byte(*x.K), Value: []byte(*x.V), Opaque: r.n - 1,
	}, r.dr)
}

func (r *confluentRun) finish(t *testing.T) ([]rec, []rec, error) {
	left := r.p.Flush(30000)
	r.p.Close()
	close(r.dr)
	<-r.drDone
	acked, perr := r.tally.producerDone()
	if perr == nil && left > 0 {
		perr = fmt.Errorf("%d records not delivered in 30 s", left)
	}
	var cerr error
	select {
	case cerr = <-r.cons:
	case <-time.After(30 * time.Second):
		cerr = fmt.Errorf("the consumer did not read the %d acknowledged records in 30 s", len(acked))
	}
	consumed := r.tally.waitFull(0)
	if perr != nil {
		return acked, consumed, perr
	}
	return acked, consumed, cerr
}

// kcat: one `kcat -P -p N` per partition (idempotent, acks=all) fed line
// by line, and a `kcat -G` balanced consumer whose JSON lines the test
// reads as they come (-u: unbuffered); it is stopped with SIGTERM and commits on the way
// out (auto commit of what it printed).

type kcatRun struct {
	tally *runTally
	prods [clusterParts]*exec.Cmd
	ins   [clusterParts]io.WriteCloser
	errs  [clusterParts]*strings.Builder
	sent  []rec
	cons  *exec.Cmd
	cerr  *strings.Builder
	read  chan error
}

func startKcatRun(t *testing.T, addrs []string, topic, group string) clusterRun {
	kc, _ := newKcatClient(t, addrs)
	bin := kc.(*kcatClient).bin
	base := []string{"-b", strings.Join(addrs, ","), "-m", "20"}
	r := &kcatRun{tally: newRunTally(), read: make(chan error, 1)}
	for p := range r.prods {
		cmd := exec.Command(bin, append(base, "-P", "-t", topic, "-p", strconv.Itoa(p), "-K", "\t",
			"-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5")...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		r.errs[p] = &strings.Builder{}
		cmd.Stderr = r.errs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.prods[p], r.ins[p] = cmd, in
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	r.cons = exec.Command(bin, append(base, "-G", group, "-J", "-q", "-u", "-X", "auto.offset.reset=earliest",
		"-X", "session.timeout.ms=10000", "-X", "fetch.wait.max.ms=100", topic)...)
	out, err := r.cons.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cerr = &strings.Builder{}
	r.cons.Stderr = r.cerr
	if err := r.cons.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cons.Process.Kill(); r.cons.Wait() })
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m kcatMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				r.read <- fmt.Errorf("kcat -J line %q: %v", sc.Text(), err)
				return
			}
			r.tally.read(rec{P: m.Partition, O: m.Offset, TS: m.TS, K: m.Key, V: m.Payload})
		}
		r.read <- sc.Err()
	}()
	return r
}

func (r *kcatRun) send(x rec) error {
	r.sent = append(r.sent, x)
	_, err := fmt.Fprintf(r.ins[x.P], "%s\t%s\n", *x.K, *x.V)
	return err
}

func (r *kcatRun) finish(t *testing.T) ([]rec, []rec, error) {
	// kcat -P delivers everything before it exits, and exits non-zero
	// when a record could not be delivered.
	for p, cmd := range r.prods {
		r.ins[p].Close()
		if err := cmd.Wait(); err != nil {
			return nil, nil, fmt.Errorf("kcat -P -p %d: %v: %s", p, err, lastLines(r.errs[p].String(), 10))
		}
	}
	for i, x := range r.sent {
		x.O = -1 // kcat does not print the offsets it was told
		r.tally.ack(i, x)
	}
	acked, _ := r.tally.producerDone()
	r.tally.waitFull(30 * time.Second) // until the consumer printed every record, or the timeout
	_ = r.cons.Process.Signal(syscall.SIGTERM)
	err := r.cons.Wait()
	if rerr := <-r.read; err == nil {
		err = rerr
	}
	consumed := r.tally.waitFull(0) // and what it printed on the way out
	if err != nil {
		return acked, consumed, fmt.Errorf("kcat -G: %v: %s", err, lastLines(r.cerr.String(), 10))
	}
	return acked, consumed, nil
}

// The Python and Node clients: the script's cluster_run op reads its
// parameters from the first stdin line, then one record per line,
// producing each as it comes, and consumes as a group member meanwhile; at
// the end of its input it flushes, reads until it has every acknowledged
// record, commits, and prints {"acked": [...], "consumed": [...]}.

type scriptRun struct {
	name   string // for messages: the script, or the Java class
	cmd    *exec.Cmd
	in     io.WriteCloser
	stdout *strings.Builder
	stderr *strings.Builder
	enc    *json.Encoder
	start  time.Time
}

func scriptRunStarter(interp, script string) func(t *testing.T, addrs []string, topic, group string) clusterRun {
	return func(t *testing.T, addrs []string, topic, group string) clusterRun {
		c := newScriptClient(t, addrs, interp, script)
		cmd := exec.Command(c.interp, c.script, "cluster_run", strings.Join(addrs, ","), topic)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		r := &scriptRun{name: script, cmd: cmd, in: in, stdout: &strings.Builder{}, stderr: &strings.Builder{}, enc: json.NewEncoder(in), start: time.Now()}
		cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
		cmd.Env = append(cmd.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		if err := r.enc.Encode(map[string]any{"group": group}); err != nil {
			t.Fatal(err)
		}
		return r
	}
}

func (r *scriptRun) send(x rec) error { return r.enc.Encode(x) }

func (r *scriptRun) finish(t *testing.T) ([]rec, []rec, error) {
	r.in.Close()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		r.cmd.Process.Kill()
		err = fmt.Errorf("no answer in 60 s")
	}
	name := r.name
	if err != nil {
		return nil, nil, fmt.Errorf("%s cluster_run (%v): %v: %s", name, time.Since(r.start).Round(time.Millisecond), err, lastLines(r.stderr.String(), 15))
	}
	var out struct{ Acked, Consumed, Replayed []rec }
	if err := json.Unmarshal([]byte(r.stdout.String()), &out); err != nil {
		return nil, nil, fmt.Errorf("%s cluster_run: bad answer %q: %v", name, r.stdout.String(), err)
	}
	// Replays after a rejoin (kafkajs_client.js, ClusterRun.java): each must be a
	// record it had read, as it was.
	seen := map[[2]int64]rec{}
	for _, x := range out.Consumed {
		seen[[2]int64{int64(x.P), x.O}] = x
	}
	for _, x := range out.Replayed {
		if f, ok := seen[[2]int64{int64(x.P), x.O}]; !ok || diffRec(f, x) != "" {
			return nil, nil, fmt.Errorf("%s: replayed %v, which it had not read so", name, x)
		}
	}
	if len(out.Replayed) > 0 {
		t.Logf("%s: %d records read again after the group's rejoin (at-least-once): %v", name, len(out.Replayed), out.Replayed)
	}
	for i := range out.Acked {
		out.Acked[i].TS = -1
	}
	return out.Acked, out.Consumed, nil
}

// Apache Kafka's Java client (java/.../ClusterRun.java): its run takes one
// record per stdin line, "partition TAB key TAB value", and answers as the
// scripts' cluster_run does.

type javaRun struct{ *scriptRun }

func javaCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	javaTools(t)
	cp, err := buildJava()
	if err != nil {
		t.Fatal(err)
	}
	return exec.Command("java", append([]string{"-cp", cp, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "minikafka.compat.ClusterRun"}, args...)...)
}

func startJavaRun(t *testing.T, addrs []string, topic, group string) clusterRun {
	cmd := javaCommand(t, "run", strings.Join(addrs, ","), topic, group)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &scriptRun{name: "ClusterRun.java", cmd: cmd, in: in, stdout: &strings.Builder{}, stderr: &strings.Builder{}, start: time.Now()}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return javaRun{r}
}

func (r javaRun) send(x rec) error {
	_, err := fmt.Fprintf(r.in, "%d\t%s\t%s\n", x.P, *x.K, *x.V)
	return err
}

// javaGroupClient is a new Java group member reading from the group's
// commits.
type javaGroupClient struct{ addrs []string }

func (c javaGroupClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	cmd := javaCommand(t, "group", strings.Join(c.addrs, ","), topic, group, strconv.Itoa(count))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ClusterRun.java group: %v: %s", err, lastLines(stderr.String(), 15))
	}
	var got []rec
	if err := json.Unmarshal(out, &got); err != nil {
		return nil, fmt.Errorf("ClusterRun.java group: bad answer %q: %v", out, err)
	}
	return got, nil
}

package bench

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Apache Kafka as a third broker (Config.Kafka, scripts/kafka-broker.sh):
// it joins the produce-*, compression, latency, consume and share runs,
// alternating with minikafka and kfake (Kafka 4.4 serves share groups with
// its defaults); its figures land in the table's other-brokers column
// under the name "kafka".

// kafkaName labels Apache Kafka's figures.
const kafkaName = "kafka"

// startKafka starts Config.Kafka as `PORT DATA_DIR CONTROLLER_PORT [k=v]`
// on two free ports and warms the JVM up with KafkaWarmup bytes produced
// once (not measured): a cold JIT would charge compilation to the first
// measured run. always asks Kafka to flush every batch, its equivalent of
// minikafka's durability always and kfake's -sync.
func (r *runner) startKafka(ctx context.Context, root string, always bool) (*proc, error) {
	dir := filepath.Join(root, kafkaName)
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	args := []string{strconv.Itoa(ports[0]), dir, strconv.Itoa(ports[1])}
	if always {
		args = append(args, "log.flush.interval.messages=1")
	}
	p, err := startProc(ctx, kafkaName, r.cfg.Kafka, args, dir)
	if err != nil {
		return nil, err
	}
	if w := r.cfg.KafkaWarmup; w > 0 {
		fmt.Fprintf(r.cfg.Log, "   %-9s warm-up: %d MiB produced, not measured (start-up %.1f s)\n", kafkaName, w>>20, p.startup.Seconds())
		spec := produceSpec{recSize: 1024, parts: 8, producers: 2, bytes: w, codec: kgo.NoCompression()}
		if _, err := runProduce(ctx, p, "warmup", spec); err != nil {
			p.stop()
			return nil, fmt.Errorf("kafka warm-up: %w", err)
		}
	}
	return p, nil
}

// freePorts reserves n distinct free ports on 127.0.0.1 and releases them
// for the child to bind (a small race with other programs, acceptable on a
// benchmark machine).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// othersRSS is the RSS of the current pair's other brokers, for the rss
// rows.
func (r *runner) othersRSS() string {
	var out []string
	for _, p := range r.others {
		if n, err := p.rss(); err == nil {
			out = append(out, p.name+": "+mib(n))
		}
	}
	return strings.Join(out, "; ")
}

package compat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func init() {
	clients = append(clients, clientCase{"kcat", newKcatClient})
}

// kcatClient drives the kcat CLI (librdkafka). kcat cannot set timestamps,
// does not print the offsets its producer was told (the consumer still
// checks every record's offset), and creates topics only by producing.
type kcatClient struct {
	bin   string
	addrs []string
}

func newKcatClient(t *testing.T, addrs []string) (client, caps) {
	c := &kcatClient{bin: lookPath(t, "kcat"), addrs: addrs}
	out, err := exec.Command(c.bin, "-V").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -V: %v: %s; %s", err, out, installHint)
	}
	ver := "?"
	if m := regexp.MustCompile(`Version (\S+) .*librdkafka (\S+)`).FindSubmatch(out); m != nil {
		ver = fmt.Sprintf("%s (librdkafka %s)", m[1], m[2])
	}
	return c, caps{
		codecs: allCodecs, timestamps: false, idempotent: true, nonIdempotent: true,
		consumeNoGroup: true, autoCreate: true, reportsOffsets: false, groups: true,
		admin: &kcatAdmin{c}, version: ver,
	}
}

func (c *kcatClient) run(t *testing.T, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"-b", strings.Join(c.addrs, ","), "-m", "20"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kcat %s: %v: %s", strings.Join(args, " "), err, lastLines(stderr.String(), 10))
	}
	return stdout.Bytes(), nil
}

// produce runs one kcat per run of records that share a partition and a
// header set (kcat's -H applies to every record of a run). Keys and values
// are tab-separated lines; -Z makes an empty key or value null.
func (c *kcatClient) produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error) {
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].P == recs[i].P && fmt.Sprint(recs[j].H) == fmt.Sprint(recs[i].H) {
			j++
		}
		args := []string{"-P", "-t", topic, "-p", strconv.Itoa(int(recs[i].P)), "-K", "\t", "-Z",
			"-X", "compression.codec=" + o.Codec, "-X", "enable.idempotence=" + strconv.FormatBool(o.Idempotent),
			"-X", "acks=all", "-X", "linger.ms=5"}
		for _, h := range recs[i].H {
			args = append(args, "-H", h.K+"="+h.V)
		}
		var in bytes.Buffer
		for _, r := range recs[i:j] {
			if r.K != nil {
				in.WriteString(*r.K)
			}
			in.WriteByte('\t')
			if r.V != nil {
				in.WriteString(*r.V)
			}
			in.WriteByte('\n')
		}
		if _, err := c.run(t, in.Bytes(), args...); err != nil {
			return nil, err
		}
		i = j
	}
	out := append([]rec(nil), recs...)
	for i := range out {
		out[i].O = -1
	}
	return out, nil
}

// kcatMsg is kcat -J's envelope; headers is a flat [k, v, k, v, ...] list.
type kcatMsg struct {
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	TS        int64    `json:"ts"`
	Headers   []string `json:"headers"`
	Key       *string  `json:"key"`
	Payload   *string  `json:"payload"`
}

func (c *kcatClient) consume(t *testing.T, topic string, parts int32, want int) ([]rec, error) {
	var out []rec
	for p := int32(0); p < parts; p++ {
		stdout, err := c.run(t, nil, "-C", "-t", topic, "-p", strconv.Itoa(int(p)), "-o", "beginning", "-e", "-J", "-q")
		if err != nil {
			return out, err
		}
		sc := bufio.NewScanner(bytes.NewReader(stdout))
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var m kcatMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return out, fmt.Errorf("kcat -J line %q: %v", sc.Text(), err)
			}
			r := rec{P: m.Partition, O: m.Offset, TS: m.TS, K: m.Key, V: m.Payload}
			for i := 0; i+1 < len(m.Headers); i += 2 {
				r.H = append(r.H, hdr{m.Headers[i], m.Headers[i+1]})
			}
			out = append(out, r)
		}
	}
	if len(out) != want {
		return out, fmt.Errorf("kcat read %d records to the end of the partitions, want %d", len(out), want)
	}
	return out, nil
}

var kcatQuery = regexp.MustCompile(`\[(\d+)\]\s+offset\s+(-?\d+)`)

// listOffset uses kcat -Q (librdkafka's offsetsForTimes), which passes -1
// and -2 through as Kafka's latest and earliest.
func (c *kcatClient) listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error) {
	out, err := c.run(t, nil, "-Q", "-t", fmt.Sprintf("%s:%d:%d", topic, part, spec))
	if err != nil {
		return 0, err
	}
	m := kcatQuery.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("kcat -Q answered %q", out)
	}
	return strconv.ParseInt(string(m[2]), 10, 64)
}

// kcatAdmin offers only what kcat has: metadata (-L).
type kcatAdmin struct{ c *kcatClient }

func (a *kcatAdmin) metadata(t *testing.T, topics ...string) (map[string]int32, error) {
	args := []string{"-L", "-J"}
	for _, tp := range topics {
		args = append(args, "-t", tp)
	}
	out, err := a.c.run(t, nil, args...)
	if err != nil {
		return nil, err
	}
	var md struct {
		Topics []struct {
			Topic      string            `json:"topic"`
			Err        *string           `json:"error"`
			Partitions []json.RawMessage `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(out, &md); err != nil {
		return nil, fmt.Errorf("kcat -L -J: %q: %v", out, err)
	}
	res := map[string]int32{}
	for _, tp := range md.Topics {
		if tp.Err == nil {
			res[tp.Topic] = int32(len(tp.Partitions))
		}
	}
	return res, nil
}

func (a *kcatAdmin) createTopic(*testing.T, string, int32, map[string]string) error {
	return errNotOffered
}
func (a *kcatAdmin) deleteTopic(*testing.T, string) error             { return errNotOffered }
func (a *kcatAdmin) createPartitions(*testing.T, string, int32) error { return errNotOffered }
func (a *kcatAdmin) describeConfig(*testing.T, string, string) (string, error) {
	return "", errNotOffered
}
func (a *kcatAdmin) alterConfig(*testing.T, string, string, string) error { return errNotOffered }
func (a *kcatAdmin) deleteRecords(*testing.T, string, int32, int64) (int64, error) {
	return 0, errNotOffered
}
func (a *kcatAdmin) listGroups(*testing.T) ([]string, error)          { return nil, errNotOffered }
func (a *kcatAdmin) describeGroup(*testing.T, string) (string, error) { return "", errNotOffered }

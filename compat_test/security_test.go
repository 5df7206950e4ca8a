package compat_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/testcert"
	"github.com/minikafka/minikafka/minikafkatest"
)

// librdkafka (through kcat and confluent-kafka-python) against the TLS and
// SASL listener: certificates made here, written as PEM files.

const (
	secUser = "rdk-user"
	secPass = "rdk-Pa55-word"
)

// secureBroker starts a broker with TLS (mutual when mutual) and SASL,
// advertised as localhost so librdkafka's hostname check passes; it
// returns the bootstrap address and the certificate files.
func secureBroker(t *testing.T, mutual bool, mechanisms ...string) (string, testcert.Files) {
	t.Helper()
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	files, err := cs.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := minikafkatest.New(t, minikafka.WithAutoCreateTopics(true),
		minikafka.WithAdvertisedAddr("localhost:0"),
		minikafka.WithTLS(cs.ServerConfig(mutual)),
		minikafka.WithSASL(map[string]string{secUser: secPass}, mechanisms...))
	return b.Addr(), files
}

func runTool(t *testing.T, stdin []byte, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %v: %s", name, err, lastLines(stderr.String(), 10))
	}
	return stdout.String(), nil
}

// kcat over SASL_SSL with SCRAM-SHA-256 produces and consumes; a wrong
// password is refused.
func TestSecurityKcatSASLSSL(t *testing.T) {
	kcat := lookPath(t, "kcat")
	addr, files := secureBroker(t, false)
	conf := func(pass string) []string {
		return []string{"-b", addr, "-m", "30",
			"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-256",
			"-X", "sasl.username=" + secUser, "-X", "sasl.password=" + pass,
			"-X", "ssl.ca.location=" + files.CA}
	}
	const n = 50
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, "k%d\tvalue-%d\n", i, i)
	}
	if _, err := runTool(t, in.Bytes(), kcat, append(conf(secPass), "-P", "-t", "sec-kcat", "-K", "\t", "-X", "acks=all")...); err != nil {
		t.Fatal(err)
	}
	out, err := runTool(t, nil, kcat, append(conf(secPass), "-C", "-t", "sec-kcat", "-o", "beginning", "-c", fmt.Sprint(n), "-e", "-f", "%k=%s\n")...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != n {
		t.Fatalf("consumed %d records, want %d:\n%s", len(lines), n, out)
	}
	for i, l := range lines {
		if l != fmt.Sprintf("k%d=value-%d", i, i) {
			t.Fatalf("record %d: %q", i, l)
		}
	}
	_, err = runTool(t, nil, kcat, append(conf("wrong"), "-L", "-m", "10")...)
	if err == nil || !strings.Contains(err.Error(), "Authentication failed") {
		t.Fatalf("wrong password: %v", err)
	}
}

// confluent-kafka-python over SASL_SSL with mutual TLS and SCRAM-SHA-512.
const confluentSecureScript = `
import sys
from confluent_kafka import Consumer, Producer, TopicPartition
bootstrap, ca, cert, key, user, pw = sys.argv[1:7]
conf = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": pw,
        "ssl.ca.location": ca, "ssl.certificate.location": cert, "ssl.key.location": key}
errors = []
p = Producer(dict(conf, acks="all"))
for i in range(30):
    p.produce("sec-py", key=b"k%d" % i, value=b"v%d" % i, on_delivery=lambda err, msg: err and errors.append(err))
left = p.flush(30)
if left or errors:
    sys.exit("produce: %d left, errors %s" % (left, errors))
c = Consumer(dict(conf, **{"group.id": "sec-py", "enable.auto.commit": False}))
c.assign([TopicPartition("sec-py", 0, 0)])
got = []
while len(got) < 30:
    m = c.poll(30)
    if m is None:
        sys.exit("no record within 30 s after %d" % len(got))
    if m.error():
        sys.exit("consume: %s" % m.error())
    got.append("%s=%s" % (m.key().decode(), m.value().decode()))
c.close()
print(",".join(got))
`

func TestSecurityConfluentPythonMutualTLS(t *testing.T) {
	lookPath(t, "/usr/bin/python3")
	addr, files := secureBroker(t, true, "SCRAM-SHA-512")
	out, err := runTool(t, nil, "/usr/bin/python3", "-c", confluentSecureScript, addr, files.CA, files.ClientCert, files.ClientKey, secUser, secPass)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 30 {
		want = append(want, fmt.Sprintf("k%d=v%d", i, i))
	}
	if got := strings.TrimSpace(out); got != strings.Join(want, ",") {
		t.Fatalf("consumed %q", got)
	}
	// Without a client certificate the handshake fails.
	noCert := strings.Replace(confluentSecureScript, `, "ssl.certificate.location": cert, "ssl.key.location": key`, `, "socket.timeout.ms": 5000, "message.timeout.ms": 5000`, 1)
	if _, err := runTool(t, nil, "/usr/bin/python3", "-c", noCert, addr, files.CA, "", "", secUser, secPass); err == nil {
		t.Fatal("client without a certificate produced")
	}
}

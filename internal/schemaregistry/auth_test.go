package schemaregistry_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// TestBasicAuth: with WithSchemaRegistryAuth every request needs a SCRAM
// user's name and password, including users created while the broker
// runs.
func TestBasicAuth(t *testing.T) {
	b, u := start(t, minikafka.WithSASL(map[string]string{"alice": "s3cret"}, "SCRAM-SHA-256", "SCRAM-SHA-512"), minikafka.WithSchemaRegistryAuth())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name       string
		user, pass string
		status     int
	}{
		{"no credentials", "", "", 401},
		{"wrong password", "alice", "nope", 401},
		{"unknown user", "mallory", "s3cret", 401},
		{"alice", "alice", "s3cret", 200},
		{"alice again (cached)", "alice", "s3cret", 200},
	} {
		req, _ := http.NewRequest("GET", u+"/subjects", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", tc.name)
		}
	}

	// A user created over Kafka is a registry user at once.
	kc := minikafkatest.Client(t, b, kgo.SASL(scram.Auth{User: "alice", Pass: "s3cret"}.AsSha256Mechanism()))
	if _, err := kadm.NewClient(kc).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "hunter2"}}); err != nil {
		t.Fatal(err)
	}
	cl, err := sr.NewClient(sr.URLs(u), sr.BasicAuth("bob", "hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSchema(ctx, "s", sr.Schema{Schema: `"string"`}); err != nil {
		t.Fatalf("bob registers: %v", err)
	}
	anon, _ := sr.NewClient(sr.URLs(u))
	if _, err := anon.Subjects(ctx); srCode(err) != 401 {
		t.Errorf("anonymous client: %v, want 401", err)
	}
}

package schemaregistry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

const (
	userV1 = `{"type":"record","name":"User","namespace":"demo","fields":[{"name":"name","type":"string"}]}`
	// v2 adds a field with a default: BACKWARD compatible.
	userV2 = `{"type":"record","name":"User","namespace":"demo","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}`
	// v3 adds a field without a default: new readers cannot read v2 data.
	userV3 = `{"type":"record","name":"User","namespace":"demo","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0},{"name":"email","type":"string"}]}`
)

type user struct {
	Name string `avro:"name"`
	Age  int    `avro:"age"`
}

func srClient(t testing.TB, url string) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func srCode(err error) int {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return 0
}

// TestFranzGoClient drives the registry with franz-go's sr client: it
// registers, registers again (same ID), evolves compatibly and
// incompatibly, and reads everything back.
func TestFranzGoClient(t *testing.T) {
	_, u := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := srClient(t, u)

	types, err := cl.SupportedTypes(ctx)
	if err != nil || len(types) != 3 {
		t.Fatalf("SupportedTypes: %v, %v", types, err)
	}
	s1, err := cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV1})
	if err != nil {
		t.Fatalf("CreateSchema v1: %v", err)
	}
	if s1.ID != 1 || s1.Version != 1 || s1.Subject != "users-value" {
		t.Fatalf("v1 = %+v, want id 1 version 1", s1)
	}
	again, err := cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV1})
	if err != nil || again.ID != s1.ID || again.Version != 1 {
		t.Fatalf("registering v1 again = %+v, %v; want the same id and version", again, err)
	}
	// The same schema under another subject keeps its ID.
	other, err := cl.CreateSchema(ctx, "other-value", sr.Schema{Schema: userV1})
	if err != nil || other.ID != s1.ID || other.Version != 1 {
		t.Fatalf("v1 under another subject = %+v, %v; want id %d version 1", other, err, s1.ID)
	}
	s2, err := cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV2})
	if err != nil {
		t.Fatalf("CreateSchema v2 (compatible): %v", err)
	}
	if s2.ID != 2 || s2.Version != 2 {
		t.Fatalf("v2 = %+v, want id 2 version 2", s2)
	}
	_, err = cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV3})
	if srCode(err) != 409 {
		t.Fatalf("CreateSchema v3 (incompatible): %v, want error code 409", err)
	}
	res, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), "users-value", -1, sr.Schema{Schema: userV3})
	if err != nil || res.Is || len(res.Messages) == 0 {
		t.Fatalf("CheckCompatibility v3 = %+v, %v; want incompatible with reasons", res, err)
	}
	t.Logf("why v3 is incompatible: %v", res.Messages)

	// With NONE, the incompatible schema goes in.
	if r := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, "users-value"); r[0].Err != nil {
		t.Fatalf("SetCompatibility: %v", r[0].Err)
	}
	if r := cl.Compatibility(ctx, "users-value"); r[0].Err != nil || r[0].Level != sr.CompatNone {
		t.Fatalf("Compatibility = %+v", r[0])
	}
	s3, err := cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV3})
	if err != nil || s3.Version != 3 {
		t.Fatalf("v3 under NONE = %+v, %v", s3, err)
	}

	versions, err := cl.SubjectVersions(ctx, "users-value")
	if err != nil || fmt.Sprint(versions) != "[1 2 3]" {
		t.Fatalf("SubjectVersions = %v, %v", versions, err)
	}
	got, err := cl.SchemaByVersion(ctx, "users-value", 2)
	if err != nil || got.ID != s2.ID || got.Schema.Schema != userV2 {
		t.Fatalf("SchemaByVersion(2) = %+v, %v", got, err)
	}
	byID, err := cl.SchemaByID(ctx, s1.ID)
	if err != nil || byID.Schema != userV1 {
		t.Fatalf("SchemaByID = %+v, %v", byID, err)
	}
	subjects, err := cl.SubjectsByID(ctx, s1.ID)
	if err != nil || fmt.Sprint(subjects) != "[other-value users-value]" {
		t.Fatalf("SubjectsByID = %v, %v", subjects, err)
	}
	found, err := cl.LookupSchema(ctx, "users-value", sr.Schema{Schema: userV2})
	if err != nil || found.Version != 2 || found.ID != s2.ID {
		t.Fatalf("LookupSchema = %+v, %v", found, err)
	}
	all, err := cl.Subjects(ctx)
	if err != nil || fmt.Sprint(all) != "[other-value users-value]" {
		t.Fatalf("Subjects = %v, %v", all, err)
	}

	// Deleting: soft, then hard; the IDs are not given again.
	if vs, err := cl.DeleteSubject(ctx, "other-value", sr.SoftDelete); err != nil || fmt.Sprint(vs) != "[1]" {
		t.Fatalf("soft DeleteSubject = %v, %v", vs, err)
	}
	if _, err := cl.DeleteSubject(ctx, "other-value", sr.SoftDelete); srCode(err) != 40404 {
		t.Fatalf("soft-deleting again: %v, want 40404", err)
	}
	if vs, err := cl.DeleteSubject(ctx, "other-value", sr.HardDelete); err != nil || fmt.Sprint(vs) != "[1]" {
		t.Fatalf("hard DeleteSubject = %v, %v", vs, err)
	}
	if _, err := cl.SubjectVersions(ctx, "other-value"); srCode(err) != 40401 {
		t.Fatalf("versions of a deleted subject: %v, want 40401", err)
	}
	if err := cl.DeleteSchema(ctx, "users-value", 3, sr.HardDelete); srCode(err) != 40407 {
		t.Fatalf("hard delete before soft: %v, want 40407", err)
	}
	if err := cl.DeleteSchema(ctx, "users-value", 3, sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	if err := cl.DeleteSchema(ctx, "users-value", 3, sr.HardDelete); err != nil {
		t.Fatal(err)
	}
	s4, err := cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: `{"type":"record","name":"User","namespace":"demo","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":1}]}`})
	if err != nil || s4.ID <= s3.ID || s4.Version != 3 {
		t.Fatalf("after a hard delete: %+v, %v; want an ID above %d and version 3", s4, err, s3.ID)
	}
}

// TestSerdeRoundTrip produces records framed by sr.Serde (Confluent's
// wire format) to the broker and decodes them back, the decoder finding
// the schema by the ID in each record as a consumer would.
func TestSerdeRoundTrip(t *testing.T) {
	b, u := start(t, minikafka.WithTopic("users", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := srClient(t, u)
	ss, err := cl.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV2})
	if err != nil {
		t.Fatal(err)
	}
	avroV2 := avro.MustParse(userV2)
	var enc sr.Serde
	enc.Register(ss.ID, user{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(avroV2, v) }))

	kc := minikafkatest.Client(t, b, kgo.ConsumeTopics("users"))
	want := []user{{"ada", 36}, {"grace", 45}, {"edsger", 72}}
	for _, w := range want {
		v, err := enc.Encode(w)
		if err != nil {
			t.Fatal(err)
		}
		if v[0] != 0 || int(v[1])<<24|int(v[2])<<16|int(v[3])<<8|int(v[4]) != ss.ID {
			t.Fatalf("not Confluent's framing: % x", v[:5])
		}
		if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "users", Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// The consumer knows nothing but the registry's URL.
	var dec sr.Serde
	var got []user
	for len(got) < len(want) {
		fs := kc.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			id, _, err := dec.DecodeID(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cl.SchemaByID(ctx, id)
			if err != nil {
				t.Fatalf("SchemaByID(%d): %v", id, err)
			}
			sch := avro.MustParse(s.Schema)
			dec.Register(id, user{}, sr.DecodeFn(func(b []byte, v any) error { return avro.Unmarshal(sch, b, v) }))
			var x user
			if err := dec.Decode(r.Value, &x); err != nil {
				t.Fatal(err)
			}
			got = append(got, x)
		})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
}

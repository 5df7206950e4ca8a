package broker

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

// scramFile is the SCRAM store's file in the data directory.
const scramFile = sasl.StoreFile

// scramBroker serves a broker on dir (the OS filesystem) with SASL users
// alice (all mechanisms); stop closes the listener and the broker.
func scramBroker(t *testing.T, dir string, sc *SASLConfig) (addr string, stop func()) {
	t.Helper()
	logs := &lockedBuf{}
	b, err := New(Config{DataDir: dir, NodeID: 1, DefaultPartitions: 1, SASL: sc,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	pc := protocol.Config{Addr: "127.0.0.1:0"}
	if sc != nil {
		pc.PreAuthMaxRequestBytes = PreAuthMaxRequestBytes
	}
	srv, err := protocol.Listen(pc, b)
	if err != nil {
		t.Fatal(err)
	}
	a := srv.Addr().(*net.TCPAddr)
	b.SetAdvertised("127.0.0.1", int32(a.Port))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		<-done
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	t.Cleanup(stop)
	return srv.Addr().String(), stop
}

// canLogin reports whether a fresh kgo client authenticates.
func canLogin(t *testing.T, addr, mech, user, pass string) bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(mechanism(mech, user, pass)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = cl.Ping(ctx)
	if err != nil && !errors.Is(err, kerr.SaslAuthenticationFailed) && !errors.Is(err, kerr.UnsupportedSaslMechanism) {
		t.Fatalf("%s %s: unexpected login error %v", mech, user, err)
	}
	return err == nil
}

// scramWire is a bare connection authenticated with SCRAM.
func scramWire(t *testing.T, addr, mech, user, pass string) *wire {
	t.Helper()
	w := dialWire(t, addr)
	if r := w.roundTrip(handshake(1, mech)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("handshake: %d", r.ErrorCode)
	}
	sess, msg, err := mechanism(mech, user, pass).Authenticate(testCtx(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r := w.roundTrip(authenticate(1, string(msg))).(*kmsg.SASLAuthenticateResponse)
		if r.ErrorCode != 0 {
			t.Fatalf("authenticate: %d", r.ErrorCode)
		}
		done, next, err := sess.Challenge(r.SASLAuthBytes)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return w
		}
		msg = next
	}
}

func mustAlter(t *testing.T, adm *kadm.Client, del []kadm.DeleteSCRAM, up []kadm.UpsertSCRAM) {
	t.Helper()
	res, err := adm.AlterUserSCRAMs(testCtx(t), del, up)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("alter %s: %v %s", r.User, r.Err, r.ErrMessage)
		}
	}
	if len(res) != len(del)+len(up) {
		t.Fatalf("alter: %d results for %d changes", len(res), len(del)+len(up))
	}
}

// credInfos describes user: mechanism → iterations, or nil with the error.
func credInfos(t *testing.T, adm *kadm.Client, user string) (map[kadm.ScramMechanism]int32, error) {
	t.Helper()
	d, err := adm.DescribeUserSCRAMs(testCtx(t), user)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := d[user]
	if !ok || len(d) != 1 {
		t.Fatalf("describe %s: %v", user, d)
	}
	if r.Err != nil {
		return nil, r.Err
	}
	m := map[kadm.ScramMechanism]int32{}
	for _, c := range r.CredInfos {
		m[c.Mechanism] = c.Iterations
	}
	return m, nil
}

// Users are created, changed and deleted through kadm over SASL/SCRAM, and
// logins follow at once; existing connections are unaffected; API changes
// survive a restart and win over the start-up users.
func TestUserSCRAMAdminKgo(t *testing.T) {
	dir := t.TempDir()
	sc := &SASLConfig{Users: map[string]string{"alice": saslTestPass}}
	addr, stop := scramBroker(t, dir, sc)
	adm := kadm.NewClient(newClient(t, addr, kgo.SASL(mechanism(SASLScramSHA256, "alice", saslTestPass))))

	// Start-up users are listed like any other.
	all, err := adm.DescribeUserSCRAMs(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if a := all["alice"]; len(all) != 1 || a.Err != nil || len(a.CredInfos) != 2 || a.CredInfos[0].Iterations != 4096 {
		t.Fatalf("describe all: %+v", all)
	}

	mustAlter(t, adm, nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "p1"}})
	if got, err := credInfos(t, adm, "carol"); err != nil || len(got) != 1 || got[kadm.ScramSha256] != 8192 {
		t.Fatalf("carol: %v %v", got, err)
	}
	if !canLogin(t, addr, SASLScramSHA256, "carol", "p1") {
		t.Fatal("carol cannot log in with SCRAM-SHA-256")
	}
	if canLogin(t, addr, SASLScramSHA512, "carol", "p1") || canLogin(t, addr, SASLPlain, "carol", "p1") {
		t.Fatal("carol logs in with a mechanism she has no credential for")
	}
	// A connection authenticated with p1 stays usable after the change.
	old := scramWire(t, addr, SASLScramSHA256, "carol", "p1")
	mustAlter(t, adm, nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Password: "p2"}})
	if canLogin(t, addr, SASLScramSHA256, "carol", "p1") || !canLogin(t, addr, SASLScramSHA256, "carol", "p2") {
		t.Fatal("password change not in effect")
	}
	old.roundTrip(metadata()) // would be closed unanswered if not authenticated
	mustAlter(t, adm, []kadm.DeleteSCRAM{{User: "carol", Mechanism: kadm.ScramSha256}}, nil)
	if canLogin(t, addr, SASLScramSHA256, "carol", "p2") {
		t.Fatal("deleted user logs in")
	}
	if _, err := credInfos(t, adm, "carol"); !errors.Is(err, kerr.ResourceNotFound) {
		t.Fatalf("deleted carol: %v", err)
	}

	// Changes to a start-up user, and a new user, then a restart.
	mustAlter(t, adm, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha512}},
		[]kadm.UpsertSCRAM{{User: "dave", Mechanism: kadm.ScramSha512, Password: "d1", Iterations: 4096}})
	mustAlter(t, adm, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha256, Password: "new-alice"}})
	stop()
	if fi, err := os.Stat(filepath.Join(dir, scramFile)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	addr, _ = scramBroker(t, dir, sc)
	for _, c := range []struct {
		mech, user, pass string
		ok               bool
	}{
		{SASLScramSHA512, "dave", "d1", true},
		{SASLScramSHA256, "alice", "new-alice", true},
		{SASLScramSHA256, "alice", saslTestPass, false}, // the API's change wins
		{SASLScramSHA512, "alice", saslTestPass, false}, // deleted stays deleted
		{SASLPlain, "alice", saslTestPass, true},        // PLAIN is not SCRAM
		{SASLScramSHA256, "carol", "p2", false},
	} {
		if got := canLogin(t, addr, c.mech, c.user, c.pass); got != c.ok {
			t.Errorf("after restart: %s %s/%s login %v, want %v", c.mech, c.user, c.pass, got, c.ok)
		}
	}
	adm = kadm.NewClient(newClient(t, addr, kgo.SASL(mechanism(SASLScramSHA512, "dave", "d1"))))
	if got, err := credInfos(t, adm, "alice"); err != nil || len(got) != 1 || got[kadm.ScramSha256] != 4096 {
		t.Fatalf("alice after restart: %v %v", got, err)
	}
}

func upsertion(user string, mech int8, iters int32, salted []byte) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iters, []byte("salt"), salted
	return u
}

func deletion(user string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = user, mech
	return d
}

// Every error Kafka's controller gives, per user, over one connection
// that stays usable, on a broker without SASL (which stores credentials
// all the same, as Kafka does).
func TestAlterUserSCRAMErrors(t *testing.T) {
	_, addr, _ := secureBroker(t, nil, nil)
	w := dialWire(t, addr)
	salted, err := pbkdf2.Key(sha256.New, "pw", []byte("salt"), 4096, 32)
	if err != nil {
		t.Fatal(err)
	}
	alter := func(del []kmsg.AlterUserSCRAMCredentialsRequestDeletion, up ...kmsg.AlterUserSCRAMCredentialsRequestUpsertion) map[string]kmsg.AlterUserSCRAMCredentialsResponseResult {
		t.Helper()
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		r.Deletions, r.Upsertions = del, up
		resp := w.roundTrip(r).(*kmsg.AlterUserSCRAMCredentialsResponse)
		out := map[string]kmsg.AlterUserSCRAMCredentialsResponseResult{}
		for _, res := range resp.Results {
			if _, dup := out[res.User]; dup {
				t.Fatalf("two results for %q", res.User)
			}
			out[res.User] = res
		}
		return out
	}
	expect := func(res map[string]kmsg.AlterUserSCRAMCredentialsResponseResult, user string, code int16, msg string) {
		t.Helper()
		r, ok := res[user]
		if !ok || r.ErrorCode != code || (msg != "" && (r.ErrorMessage == nil || *r.ErrorMessage != msg)) {
			t.Fatalf("%q: %+v, want code %d %q", user, r, code, msg)
		}
	}
	res := alter(nil,
		upsertion("ok", 1, 4096, salted),
		upsertion("", 1, 4096, salted),
		upsertion("badmech", 3, 4096, salted),
		upsertion("zeromech", 0, 4096, salted),
		upsertion("few", 1, 4095, salted),
		upsertion("many", 2, 16385, salted),
		upsertion("nosalted", 1, 4096, nil),
		upsertion("twice", 1, 4096, salted),
		upsertion("twice", 2, 4096, salted),
		upsertion("max", 2, 16384, salted),
	)
	if len(res) != 9 {
		t.Fatalf("%d results: %+v", len(res), res)
	}
	expect(res, "ok", 0, "")
	expect(res, "max", 0, "")
	expect(res, "", kerr.UnacceptableCredential.Code, "Username must not be empty")
	expect(res, "badmech", kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism")
	expect(res, "zeromech", kerr.UnsupportedSaslMechanism.Code, "")
	expect(res, "few", kerr.UnacceptableCredential.Code, "Too few iterations")
	expect(res, "many", kerr.UnacceptableCredential.Code, "Too many iterations")
	expect(res, "nosalted", kerr.UnacceptableCredential.Code, "")
	expect(res, "twice", kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request")

	res = alter([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{
		deletion("ghost", 1),   // never existed
		deletion("ok", 2),      // no SHA-512 credential
		deletion("max", 2),     // fine, but also upserted below
		deletion("", 1),        //
		deletion("badmech", 9), //
		deletion("ok", 1),      // a second change of "ok"...
	}, upsertion("max", 1, 4096, salted))
	expect(res, "ghost", kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist")
	expect(res, "ok", kerr.ResourceNotFound.Code, "") // first error sticks
	expect(res, "max", kerr.DuplicateResource.Code, "")
	expect(res, "", kerr.UnacceptableCredential.Code, "")
	expect(res, "badmech", kerr.UnsupportedSaslMechanism.Code, "")

	// Nothing failed was applied: exactly ok (256) and max (512) exist.
	describe := func(users ...string) map[string]kmsg.DescribeUserSCRAMCredentialsResponseResult {
		t.Helper()
		r := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		if users != nil {
			r.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{}
		}
		for _, u := range users {
			ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
			ru.Name = u
			r.Users = append(r.Users, ru)
		}
		resp := w.roundTrip(r).(*kmsg.DescribeUserSCRAMCredentialsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("describe: code %d", resp.ErrorCode)
		}
		out := map[string]kmsg.DescribeUserSCRAMCredentialsResponseResult{}
		for _, res := range resp.Results {
			out[res.User] = res
		}
		return out
	}
	for _, all := range []map[string]kmsg.DescribeUserSCRAMCredentialsResponseResult{describe(), describe([]string{}...)} {
		if len(all) != 2 || len(all["ok"].CredentialInfos) != 1 || all["ok"].CredentialInfos[0].Mechanism != 1 ||
			len(all["max"].CredentialInfos) != 1 || all["max"].CredentialInfos[0].Iterations != 16384 {
			t.Fatalf("describe all: %+v", all)
		}
	}
	d := describe("ok", "ghost", "max", "max")
	if len(d) != 3 || d["ok"].ErrorCode != 0 || d["ghost"].ErrorCode != kerr.ResourceNotFound.Code ||
		d["max"].ErrorCode != kerr.DuplicateResource.Code || len(d["max"].CredentialInfos) != 0 {
		t.Fatalf("describe: %+v", d)
	}
	// Deleting the last credential removes the user from the listing.
	res = alter([]kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("ok", 1)})
	expect(res, "ok", 0, "")
	if all := describe(); len(all) != 1 {
		t.Fatalf("after delete: %+v", all)
	}
	w.roundTrip(metadata()) // the connection is still usable
}

// A user created through the API while the broker has SCRAM disabled is
// stored (as Kafka does) and is usable once SCRAM is enabled.
func TestAlterUserSCRAMStoredWithoutSCRAM(t *testing.T) {
	dir := t.TempDir()
	addr, stop := scramBroker(t, dir, &SASLConfig{Users: map[string]string{"alice": "a"}, Mechanisms: []string{SASLPlain}})
	adm := kadm.NewClient(newClient(t, addr, kgo.SASL(mechanism(SASLPlain, "alice", "a"))))
	mustAlter(t, adm, nil, []kadm.UpsertSCRAM{{User: "erin", Mechanism: kadm.ScramSha256, Password: "e"}})
	if got, err := credInfos(t, adm, "erin"); err != nil || got[kadm.ScramSha256] != 4096 {
		t.Fatalf("erin: %v %v", got, err)
	}
	if canLogin(t, addr, SASLScramSHA256, "erin", "e") {
		t.Fatal("SCRAM login with SCRAM disabled")
	}
	stop()
	addr, _ = scramBroker(t, dir, &SASLConfig{Users: map[string]string{"alice": "a"}})
	if !canLogin(t, addr, SASLScramSHA256, "erin", "e") {
		t.Fatal("stored credential not usable once SCRAM is enabled")
	}
}

// A credentials file that cannot be decoded stops the broker from starting,
// with an error naming the file, as other damaged metadata does: starting
// without it could let a revoked start-up credential log in again.
func TestSCRAMStoreCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, scramFile), []byte(`{"version":1,"credentials":[{"user":"x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{DataDir: dir, NodeID: 1, DefaultPartitions: 1, SASL: &SASLConfig{Users: map[string]string{"alice": "a"}}})
	if err == nil {
		b.Close()
		t.Fatal("started on a corrupt credentials file")
	}
	if !strings.Contains(err.Error(), scramFile) {
		t.Fatalf("error does not name the file: %v", err)
	}
	// The directory is usable again once the file is dealt with.
	if err := os.Remove(filepath.Join(dir, scramFile)); err != nil {
		t.Fatal(err)
	}
	addr, _ := scramBroker(t, dir, &SASLConfig{Users: map[string]string{"alice": "a"}})
	if !canLogin(t, addr, SASLScramSHA256, "alice", "a") {
		t.Fatal("no SCRAM login after removing the corrupt file")
	}
}

// When the credentials file cannot be written, Alter answers
// KAFKA_STORAGE_ERROR for each valid change and applies none of them.
func TestAlterUserSCRAMPersistFailure(t *testing.T) {
	var fail atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if fail.Load() && op == vfs.OpRename && strings.HasSuffix(p, scramFile+".tmp") {
			return 0, vfs.ErrInjected
		}
		return n, nil
	})
	b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), inj) })
	salted := []byte("0123456789abcdef0123456789abcdef")
	alter := func(u string) int16 {
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		r.Upsertions = append(r.Upsertions, upsertion(u, 1, 4096, salted), upsertion("", 1, 4096, salted))
		resp := serve(t, b, r).(*kmsg.AlterUserSCRAMCredentialsResponse)
		if len(resp.Results) != 2 || resp.Results[1].ErrorCode != kerr.UnacceptableCredential.Code {
			t.Fatalf("%+v", resp.Results)
		}
		return resp.Results[0].ErrorCode
	}
	if c := alter("kept"); c != 0 {
		t.Fatalf("first alter: %d", c)
	}
	fail.Store(true)
	if c := alter("lost"); c != kerr.KafkaStorageError.Code {
		t.Fatalf("alter with a failing disk: %d", c)
	}
	d := serve(t, b, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()).(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if len(d.Results) != 1 || d.Results[0].User != "kept" {
		t.Fatalf("describe: %+v", d.Results)
	}
}

// Logins look credentials up while Alter replaces them (run with -race).
func TestSCRAMStoreConcurrentLookup(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.SASL = &SASLConfig{Users: map[string]string{"u": "p"}} })
	salted := []byte("0123456789abcdef0123456789abcdef")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c := b.scram.Get("u", SASLScramSHA256); c == nil || (c.Iterations() != 4096 && c.Iterations() != 5000) {
					t.Errorf("lookup: %+v", c)
					return
				}
			}
		}()
	}
	for i := range 20 {
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		r.Upsertions = append(r.Upsertions, upsertion("u", 1, 4096+int32(i%2)*904, salted))
		if res := serve(t, b, r).(*kmsg.AlterUserSCRAMCredentialsResponse); res.Results[0].ErrorCode != 0 {
			t.Fatalf("alter: %+v", res.Results)
		}
	}
	close(stop)
	wg.Wait()
}

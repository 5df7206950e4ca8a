package protocol

import "testing"

// Two Servers sharing one Handler: each request's ConnInfo names the
// listener it came in on.
func TestListenerNameOnConnInfo(t *testing.T) {
	h := &fakeHandler{}
	a := startServer(t, Config{ListenerName: "INTERNAL"}, h)
	b := startServer(t, Config{ListenerName: "EXTERNAL"}, h)
	for _, s := range []*Server{a, b, a} {
		c := dial(t, s)
		send(t, c, frame(1, nil, metadataReq(9)))
		mustReadFrame(t, c)
		c.Close()
	}
	var got []string
	for _, r := range h.requests() {
		got = append(got, r.Conn.Listener)
	}
	if len(got) != 3 || got[0] != "INTERNAL" || got[1] != "EXTERNAL" || got[2] != "INTERNAL" {
		t.Fatalf("listeners %q, want INTERNAL, EXTERNAL, INTERNAL", got)
	}
}

package sasl

import "testing"

// FuzzParsePlain: no panic; a parsed message is exactly its three parts
// joined by NUL.
func FuzzParsePlain(f *testing.F) {
	for _, s := range []string{"\x00alice\x00secret", "alice\x00alice\x00secret", "", "\x00\x00", "a\x00b", "a\x00b\x00c\x00d", "\xff\x00u\x00p"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		authz, user, pass, err := parsePlain(msg)
		if err != nil {
			return
		}
		if authz+"\x00"+user+"\x00"+pass != string(msg) {
			t.Fatalf("parts %q %q %q do not rebuild %q", authz, user, pass, msg)
		}
	})
}

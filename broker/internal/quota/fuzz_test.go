package quota

import "testing"

// FuzzDecode: no panic; what decodes re-encodes to bytes that decode to
// the same encoding.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("MKQUOTA\n\x01\x00\x00\x00\x02\x00\x00\x00\x00[]"))
	user := "alice"
	f.Add(Encode(NewSet([]Entry{{Entity: Entity{{TypeUser, &user}, {TypeClient, nil}}, Values: map[string]float64{ProducerByteRate: 100}}}, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err != nil {
			return
		}
		enc := Encode(s)
		s2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if string(Encode(s2)) != string(enc) {
			t.Fatal("encoding not stable")
		}
	})
}

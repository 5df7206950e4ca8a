package main

import (
	"bytes"
	"testing"
)

func TestValidateCompressedRecordsFlag(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	env := func(k string) (string, bool) {
		return "true", k == "MINIKAFKA_VALIDATE_COMPRESSED_RECORDS"
	}
	envOff := func(k string) (string, bool) {
		return "false", k == "MINIKAFKA_VALIDATE_COMPRESSED_RECORDS"
	}
	for _, c := range []struct {
		args   []string
		lookup func(string) (string, bool)
		want   bool
	}{
		{nil, none, true}, // validation is the default
		{[]string{"-validate-compressed-records"}, none, true},
		{[]string{"-validate-compressed-records=false"}, none, false},
		{nil, envOff, false},
		{nil, env, true},
		{[]string{"-validate-compressed-records=false"}, env, false}, // flags win
	} {
		var stderr bytes.Buffer
		s, err := parseSettings(c.args, c.lookup, &stderr)
		if err != nil {
			t.Fatalf("%q: %v: %s", c.args, err, stderr.String())
		}
		if s.validation.compressed != c.want {
			t.Errorf("%q: %v, want %v", c.args, s.validation.compressed, c.want)
		}
		if len(s.validation.options()) != 3 {
			t.Errorf("%q: options", c.args)
		}
	}
}

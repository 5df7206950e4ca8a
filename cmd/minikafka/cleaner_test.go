package main

import (
	"bytes"
	"testing"
	"time"
)

func TestCleanerFlags(t *testing.T) {
	env := map[string]string{"MINIKAFKA_LOG_CLEANER_DEDUPE_BUFFER_SIZE": "1048576"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	s, err := parseSettings([]string{"-log-cleaner-backoff", "2s"}, lookup, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if s.cleaner.backoff != 2*time.Second || s.cleaner.dedupeBytes != 1<<20 {
		t.Fatalf("cleaner settings %+v", s.cleaner)
	}
	s, err = parseSettings(nil, func(string) (string, bool) { return "", false }, &stderr)
	if err != nil || s.cleaner.backoff != 15*time.Second || s.cleaner.dedupeBytes != 128<<20 {
		t.Fatalf("defaults %+v, %v", s.cleaner, err)
	}
	stderr.Reset()
	if _, err := parseSettings([]string{"-log-cleaner-backoff", "-1s"}, func(string) (string, bool) { return "", false }, &stderr); err == nil ||
		!bytes.Contains(stderr.Bytes(), []byte("-log-cleaner-backoff: must not be negative")) {
		t.Fatalf("negative backoff: %v, %q", err, stderr.String())
	}
}

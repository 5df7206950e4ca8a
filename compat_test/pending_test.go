//go:build !compatpending

package compat_test

// pending lists client/scenario pairs that fail on today's broker because of
// a broker bug described in FINDINGS.md. They are not run under plain
// `go test` (the matrix shows them as "pending"); `-tags compatpending` runs
// them. Remove an entry when the broker fix lands.
var pending = map[string]string{
	"kcat/produce-consume/none":   "empty Fetch partition answered with null records (FINDINGS.md #1)",
	"kcat/produce-consume/gzip":   "empty Fetch partition answered with null records (FINDINGS.md #1)",
	"kcat/produce-consume/snappy": "empty Fetch partition answered with null records (FINDINGS.md #1)",
	"kcat/produce-consume/lz4":    "empty Fetch partition answered with null records (FINDINGS.md #1)",
	"kcat/produce-consume/zstd":   "empty Fetch partition answered with null records (FINDINGS.md #1)",
	"kcat/producer/idempotent":    "empty Fetch partition answered with null records (FINDINGS.md #1)",
	"kcat/producer/plain":         "empty Fetch partition answered with null records (FINDINGS.md #1)",
}

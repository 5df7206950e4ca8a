//go:build compatpending

package compat_test

// With -tags compatpending every scenario runs, including those pending.go
// lists for plain `go test`.
var pending = map[string]string{}

//go:build !unix

package minikafka

// lockDataDir is a no-op where flock(2) is not available.
func lockDataDir(dir string) (release func(), err error) { return func() {}, nil }

//go:build !unix

package logstore

func descriptorLimit() int { return 0 }

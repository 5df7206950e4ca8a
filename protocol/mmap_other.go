//go:build !linux

package protocol

func mapFrame(n int) ([]byte, bool) { return nil, false }

func unmapFrame([]byte) {}

func remapFrame([]byte, int) ([]byte, bool) { return nil, false }

//go:build !linux

package protocol

func mapFrame(n int) ([]byte, bool) { return nil, false }

func unmapFrame([]byte) {}

func mremapFrame([]byte, int) ([]byte, bool) { return nil, false }

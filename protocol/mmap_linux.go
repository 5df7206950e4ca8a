package protocol

import "golang.org/x/sys/unix"

// mapFrame allocates a large frame buffer outside the Go heap, so that
// releasing it returns its memory to the system at once: huge requests
// dropped under a flood otherwise wait for the collector, and their
// memory for reuse, raising the broker's peak RSS well past the budget.
func mapFrame(n int) ([]byte, bool) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return b, true
}

func unmapFrame(b []byte) { unix.Munmap(b[:cap(b)]) }

// mremapFrame grows a buffer from mapFrame to n bytes, keeping its pages
// (the kernel may move the mapping); b must not be used afterwards. On
// failure b is unchanged.
func mremapFrame(b []byte, n int) ([]byte, bool) {
	nb, err := unix.Mremap(b[:cap(b)], n, unix.MREMAP_MAYMOVE)
	if err != nil {
		return nil, false
	}
	return nb, true
}

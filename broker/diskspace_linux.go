package broker

import "syscall"

// diskSpace returns the total and available bytes of the volume holding
// dir, or -1, -1.
func diskSpace(dir string) (total, usable int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	return int64(st.Blocks) * st.Bsize, int64(st.Bavail) * st.Bsize
}

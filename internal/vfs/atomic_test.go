package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// atomicFixture is a memory FS whose /d/f durably holds "old".
func atomicFixture(t *testing.T) *MemFS {
	t.Helper()
	m := NewMem()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(m, "/d/f", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m.CrashClone(), "/d/f"); got != "old" {
		t.Fatalf("fixture not durable: %q", got)
	}
	return m
}

func assertNoTmp(t *testing.T, fsys FS) {
	t.Helper()
	if _, err := fsys.Stat("/d/f.tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("tmp file left behind: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	m := atomicFixture(t)
	if err := WriteFileAtomic(m, "/d/f", []byte("new content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m, "/d/f"); got != "new content" {
		t.Fatalf("got %q", got)
	}
	// A nil return means durable: the crash image has the new content.
	c := m.CrashClone()
	if got := readAll(t, c, "/d/f"); got != "new content" {
		t.Fatalf("after crash: %q", got)
	}
	assertNoTmp(t, m)
	assertNoTmp(t, c)
}

// TestWriteFileAtomicCrash takes the crash image just before each step of
// the write: whatever the step, the image holds the old content or, once
// the directory is fsynced, the new one.
func TestWriteFileAtomicCrash(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		want string
	}{
		{OpOpen, "old"},
		{OpWrite, "old"},
		{OpSync, "old"},
		{OpRename, "old"},
		{OpSyncDir, "old"}, // renamed, but the rename is not durable yet
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			m := atomicFixture(t)
			var image *MemFS
			inj := InjectorFunc(func(op Op, _ string, n int) (int, error) {
				if op == tc.op && image == nil {
					image = m.CrashClone()
				}
				return n, nil
			})
			if err := WriteFileAtomic(NewFaultFS(m, inj), "/d/f", []byte("new"), 0o644); err != nil {
				t.Fatal(err)
			}
			if image == nil {
				t.Fatalf("no %v happened", tc.op)
			}
			if got := readAll(t, image, "/d/f"); got != tc.want {
				t.Fatalf("crash before %v: got %q, want %q", tc.op, got, tc.want)
			}
		})
	}
}

// TestWriteFileAtomicFault fails one step and checks that the error is
// returned and the old file is still there, on disk and after a crash.
func TestWriteFileAtomicFault(t *testing.T) {
	for _, f := range []*FailNth{
		{Op: OpOpen, N: 1},
		{Op: OpWrite, N: 1, Tear: 2},
		{Op: OpSync, N: 1},
		{Op: OpRename, N: 1},
	} {
		t.Run(f.Op.String(), func(t *testing.T) {
			m := atomicFixture(t)
			err := WriteFileAtomic(NewFaultFS(m, f), "/d/f", []byte("new"), 0o644)
			if !errors.Is(err, ErrInjected) {
				t.Fatalf("got %v, want the injected fault", err)
			}
			if got := readAll(t, m, "/d/f"); got != "old" {
				t.Fatalf("live file: %q", got)
			}
			if got := readAll(t, m.CrashClone(), "/d/f"); got != "old" {
				t.Fatalf("after crash: %q", got)
			}
			assertNoTmp(t, m)
		})
	}
	// A failed directory fsync is reported: the new content is in place but
	// not known to be durable.
	m := atomicFixture(t)
	err := WriteFileAtomic(NewFaultFS(m, &FailNth{Op: OpSyncDir, N: 1}), "/d/f", []byte("new"), 0o644)
	if !errors.Is(err, ErrInjected) {
		t.Fatalf("syncdir: got %v, want the injected fault", err)
	}
	if got := readAll(t, m.CrashClone(), "/d/f"); got != "old" {
		t.Fatalf("syncdir: after crash: %q", got)
	}
}

// TestReplaceFile checks that ReplaceFile leaves the directory fsync to the
// caller: a new file is absent from the crash image until then.
func TestReplaceFile(t *testing.T) {
	m := atomicFixture(t)
	if err := ReplaceFile(m, "/d/f", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceFile(m, "/d/g", []byte("g"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := m.CrashClone()
	if got := readAll(t, c, "/d/f"); got != "old" {
		t.Fatalf("before SyncDir: %q", got)
	}
	if _, err := c.Stat("/d/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("new file durable before SyncDir: %v", err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	c = m.CrashClone()
	if got := readAll(t, c, "/d/f") + readAll(t, c, "/d/g"); got != "newg" {
		t.Fatalf("after SyncDir: %q", got)
	}
}

// TestWriteFileAtomicPerm checks on the OS that the mode given is the mode
// the file ends up with (the rename carries the tmp file's mode), which the
// SCRAM credential store relies on.
func TestWriteFileAtomicPerm(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits")
	}
	name := filepath.Join(t.TempDir(), "secret")
	if err := WriteFileAtomic(OS{}, name, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
}

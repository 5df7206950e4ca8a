package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestSemantics runs the same script against the OS and the memory FS so
// the two behave alike.
func TestSemantics(t *testing.T) {
	for name, mk := range map[string]func(t *testing.T) (FS, string){
		"os":  func(t *testing.T) (FS, string) { return OS{}, t.TempDir() },
		"mem": func(t *testing.T) (FS, string) { return NewMem(), "/data" },
	} {
		t.Run(name, func(t *testing.T) {
			fsys, root := mk(t)
			dir := filepath.Join(root, "a", "b")
			if err := fsys.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "f")
			if _, err := fsys.OpenFile(p, os.O_RDWR, 0); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("open missing: %v", err)
			}
			f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("excl: %v", err)
			}
			f.Write([]byte("hello "))
			f.WriteAt([]byte("world"), 6)
			buf := make([]byte, 20)
			n, err := f.ReadAt(buf, 0)
			if n != 11 || err != io.EOF || string(buf[:n]) != "hello world" {
				t.Fatalf("readat %d %v %q", n, err, buf[:n])
			}
			if err := f.Truncate(5); err != nil {
				t.Fatal(err)
			}
			if st, _ := f.Stat(); st.Size() != 5 {
				t.Fatalf("size %d", st.Size())
			}
			if err := fsys.Rename(p, p+"2"); err != nil {
				t.Fatal(err)
			}
			// The open handle survives the rename and the unlink.
			if err := fsys.Remove(p + "2"); err != nil {
				t.Fatal(err)
			}
			if n, _ := f.ReadAt(buf[:5], 0); n != 5 || string(buf[:5]) != "hello" {
				t.Fatal("handle lost after unlink")
			}
			f.Close()
			if _, err := fsys.Stat(p + "2"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("stat removed: %v", err)
			}
			g, _ := fsys.OpenFile(filepath.Join(dir, "g"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			g.Write([]byte("ab"))
			g.Write([]byte("cd"))
			g.Close()
			names, err := fsys.ReadDir(filepath.Join(root, "a"))
			if err != nil || len(names) != 1 || names[0] != "b" {
				t.Fatalf("readdir %v %v", names, err)
			}
			names, _ = fsys.ReadDir(dir)
			if len(names) != 1 || names[0] != "g" {
				t.Fatalf("readdir %v", names)
			}
			if st, err := fsys.Stat(filepath.Join(dir, "g")); err != nil || st.Size() != 4 {
				t.Fatalf("append size %v %v", st, err)
			}
			if err := fsys.SyncDir(dir); err != nil {
				t.Fatal(err)
			}
			if err := fsys.RemoveAll(filepath.Join(root, "a")); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("removeall: %v", err)
			}
		})
	}
}

func TestCrashClone(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d", 0o755)
	f, _ := m.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	f.Write([]byte("synced"))
	// Not durable yet: the directory entry was never synced.
	if _, err := m.CrashClone().Stat("/d/f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced entry survived: %v", err)
	}
	f.Sync()
	m.SyncDir("/d")
	f.Write([]byte("-lost"))
	c := m.CrashClone()
	got := readAll(t, c, "/d/f")
	if got != "synced" {
		t.Fatalf("got %q", got)
	}
	// Overwriting synced bytes must not leak into the durable image.
	f.WriteAt([]byte("XX"), 0)
	f.Truncate(3)
	if got := readAll(t, m.CrashClone(), "/d/f"); got != "synced" {
		t.Fatalf("after overwrite got %q", got)
	}
	f.Sync()
	if got := readAll(t, m.CrashClone(), "/d/f"); got != "XXn" {
		t.Fatalf("after sync got %q", got)
	}
	// A rename not followed by SyncDir is undone by a crash.
	m.Rename("/d/f", "/d/h")
	c = m.CrashClone()
	if readAll(t, c, "/d/f") != "XXn" {
		t.Fatal("old name lost")
	}
	if _, err := c.Stat("/d/h"); err == nil {
		t.Fatal("unsynced rename survived")
	}
	// The clone is independent of the original.
	cf, _ := c.OpenFile("/d/f", os.O_RDWR, 0)
	cf.WriteAt([]byte("zz"), 0)
	if readAll(t, m, "/d/h") != "XXn" {
		t.Fatal("clone shares data")
	}
}

func readAll(t *testing.T, fsys FS, name string) string {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFaultFS(t *testing.T) {
	m := NewMem()
	inj := &FailNth{Op: OpWrite, N: 2, Tear: 3, Sticky: true}
	ffs := NewFaultFS(m, inj)
	f, err := ffs.OpenFile("/x", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("one")); err != nil {
		t.Fatal(err)
	}
	n, err := f.Write([]byte("second"))
	if n != 3 || !errors.Is(err, ErrInjected) {
		t.Fatalf("tear: %d %v", n, err)
	}
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("sticky sync: %v", err)
	}
	if got := readAll(t, m, "/x"); got != "onesec" {
		t.Fatalf("got %q", got)
	}
	s := &FailNth{Op: OpSync, N: 1}
	f2, _ := NewFaultFS(m, s).OpenFile("/x", os.O_RDWR, 0)
	if err := f2.Sync(); !errors.Is(err, ErrInjected) || !s.Fired() {
		t.Fatal(err)
	}
	if err := f2.Sync(); err != nil {
		t.Fatal("non-sticky fault repeated")
	}
}

// PowerCut takes the same image as CrashClone, and no sync on the old
// filesystem succeeds afterwards: a broker still running on it cannot
// acknowledge data the image lacks.
func TestPowerCut(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := m.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("before"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("after"))
	img := m.PowerCut()
	if err := f.Sync(); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("Sync after the cut: %v, want ErrPowerCut", err)
	}
	if err := m.SyncDir("/d"); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("SyncDir after the cut: %v, want ErrPowerCut", err)
	}
	g, err := img.OpenFile("/d/f", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(g)
	if string(got) != "before" {
		t.Fatalf("image holds %q, want only the synced %q", got, "before")
	}
	// The image is a fresh machine: it syncs again.
	h, err := img.OpenFile("/d/g", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Sync(); err != nil {
		t.Fatalf("Sync on the image: %v", err)
	}
}

package vfs_test

import (
	"errors"
	"io/fs"
	"testing"

	"marketd/internal/vfs"
)

func mustWrite(t *testing.T, fsys vfs.FS, name, data string, syncFile bool) {
	t.Helper()
	f, err := fsys.Create(name, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if syncFile {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// content returns a file's content after a crash, or "<none>".
func content(t *testing.T, fsys vfs.FS, name string) string {
	t.Helper()
	b, err := fsys.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCrashKeepsOnlySynced walks the cases a crash must tell apart: file
// content is kept only once the file is synced, and a name (creation,
// rename, removal) only once its directory is.
func TestCrashKeepsOnlySynced(t *testing.T) {
	const dir = "/d"
	for _, tc := range []struct {
		name  string
		steps func(t *testing.T, c *vfs.CrashFS)
		file  string
		want  string
	}{
		{"file and dir synced", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", true)
			mustSyncDir(t, c, dir)
		}, "/d/a", "x"},
		{"file synced, dir not", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", true)
		}, "/d/a", "<none>"},
		{"dir synced, file not", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", false)
			mustSyncDir(t, c, dir)
		}, "/d/a", ""},
		{"rename not synced keeps the old name", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", true)
			mustSyncDir(t, c, dir)
			must(t, c.Rename("/d/a", "/d/b"))
		}, "/d/a", "x"},
		{"rename synced", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", true)
			mustSyncDir(t, c, dir)
			must(t, c.Rename("/d/a", "/d/b"))
			mustSyncDir(t, c, dir)
		}, "/d/b", "x"},
		{"removal not synced", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", true)
			mustSyncDir(t, c, dir)
			must(t, c.Remove("/d/a"))
		}, "/d/a", "x"},
		{"write after sync is lost", func(t *testing.T, c *vfs.CrashFS) {
			mustWrite(t, c, "/d/a", "x", true)
			mustSyncDir(t, c, dir)
			f, err := c.OpenReadWrite("/d/a")
			must(t, err)
			must(t, f.Truncate(0))
			must(t, f.Close())
		}, "/d/a", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := vfs.NewCrashFS()
			must(t, c.MkdirAll(dir, 0o750))
			tc.steps(t, c)
			if got := content(t, c.Crash(), tc.file); got != tc.want {
				t.Fatalf("after crash %s holds %q, want %q", tc.file, got, tc.want)
			}
		})
	}
}

func mustSyncDir(t *testing.T, fsys vfs.FS, dir string) {
	t.Helper()
	must(t, vfs.SyncDir(fsys, dir))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCrashFSReadDir(t *testing.T) {
	c := vfs.NewCrashFS()
	must(t, c.MkdirAll("/d/sub", 0o750))
	mustWrite(t, c, "/d/b", "1", false)
	mustWrite(t, c, "/d/a", "22", false)
	ents, err := c.ReadDir("/d")
	must(t, err)
	var got []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		got = append(got, n)
	}
	if want := "[a b sub/]"; fmtSlice(got) != want {
		t.Fatalf("ReadDir = %v, want %s", got, want)
	}
	if _, err := c.CreateExclusive("/d/a", 0o640); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateExclusive of an existing file: %v, want ErrExist", err)
	}
	if _, err := c.ReadFile("/nodir/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile in a missing dir: %v, want ErrNotExist", err)
	}
}

func fmtSlice(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

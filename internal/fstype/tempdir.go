package fstype

import "testing"

// DiskTempDir returns a new tb.TempDir(), failing tb when it is in memory
// (tmpfs, ramfs): set TMPDIR to a directory on disk.
func DiskTempDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if fs, inMemory, err := Of(dir); err != nil {
		tb.Fatal(err)
	} else if inMemory {
		tb.Fatalf("%s is on %s, where fsync costs nothing; set TMPDIR to a directory on disk", dir, fs)
	}
	return dir
}

//go:build linux

package fstype

import (
	"os"
	"testing"
)

// TestOf: /dev/shm is tmpfs wherever it exists; a directory on tmpfs is
// reported as in memory, and Of fails on a missing directory.
func TestOf(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err == nil {
		name, inMemory, err := Of("/dev/shm")
		if err != nil || name != "tmpfs" || !inMemory {
			t.Fatalf("/dev/shm: %q, in memory %v, %v; want tmpfs in memory", name, inMemory, err)
		}
	}
	if _, _, err := Of(t.TempDir() + "/missing"); err == nil {
		t.Fatal("a missing directory: no error")
	}
}

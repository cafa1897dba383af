//go:build linux

package fstype

import (
	"fmt"
	"syscall"
)

// Magic numbers of statfs(2)'s f_type (linux/magic.h) for the file systems
// worth naming.
var fileSystems = []struct {
	magic    int64
	name     string
	inMemory bool
}{
	{0xEF53, "ext2/3/4", false},
	{0x58465342, "xfs", false},
	{0x9123683E, "btrfs", false},
	{0x2FC12FC1, "zfs", false},
	{0x794C7630, "overlayfs", false},
	{0x01021994, "tmpfs", true},
	{0x858458F6, "ramfs", true},
}

// Of names the file system dir is on and reports whether it keeps its
// files in memory, where an fsync costs nothing.
func Of(dir string) (name string, inMemory bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false, fmt.Errorf("statfs %s: %w", dir, err)
	}
	for _, fs := range fileSystems {
		if int64(st.Type) == fs.magic {
			return fs.name, fs.inMemory, nil
		}
	}
	return fmt.Sprintf("file system 0x%X", st.Type), false, nil
}

//go:build !linux

package core

// populate does nothing where madvise's MADV_POPULATE_WRITE is not (see
// the Linux version): the writes fault the pages in.
func populate([]byte) {}

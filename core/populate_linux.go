package core

import (
	"os"
	"syscall"
	"unsafe"
)

// madvPopulateWrite is madvise's MADV_POPULATE_WRITE (Linux 5.14): fault
// in the pages of a range, writable, as writes would, in one call.
const madvPopulateWrite = 23

// populateMin is the least range populate asks the kernel to map: below
// it the page faults it would save are a few.
const populateMin = 64 << 10

// populate maps the whole pages of b, writable, before anything is
// written to them (madvise MADV_POPULATE_WRITE), instead of a page fault
// at the first write into each. It is advice: on a kernel without it, or
// on an error, the writes fault the pages in as they would have.
func populate(b []byte) {
	if len(b) < populateMin {
		return
	}
	page := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := (p+page-1)&^(page-1) - p
	n := (uintptr(len(b)) - off) &^ (page - 1)
	_ = syscall.Madvise(b[off:off+n], madvPopulateWrite)
}

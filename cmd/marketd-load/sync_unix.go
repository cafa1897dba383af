//go:build unix

package main

import "syscall"

// syncDisks is load.Options.Settle with -sync: it writes every file
// system's dirty pages to disk (sync(2)) before a warm-up. Pages a build or
// the previous run left dirty are otherwise written back by the kernel
// about 30 s after they were written, inside the run, and on ext4 a log
// fsync issued meanwhile waited 40-145 ms for that writeback
// (docs/PERFORMANCE.md, "Writeback that is not the server's").
func syncDisks() error {
	syscall.Sync()
	return nil
}

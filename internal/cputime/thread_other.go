//go:build !linux

package cputime

import "time"

// Thread cannot read a thread's CPU time here: it reports none.
func Thread() (time.Duration, bool) { return 0, false }

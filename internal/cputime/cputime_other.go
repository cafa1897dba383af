//go:build !unix

package cputime

import "time"

// Process cannot read the process's CPU time here: it reports none.
func Process() (time.Duration, bool) { return 0, false }

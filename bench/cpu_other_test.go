//go:build !unix

package bench

import "time"

// processCPU cannot read the process's CPU time here: it reports none.
func processCPU() (time.Duration, bool) { return 0, false }

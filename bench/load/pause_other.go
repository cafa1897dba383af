//go:build !linux

package load

import (
	"errors"
	"time"
)

// pausesSupported is false: Pauses.Validate refuses pauses here before
// any run.
const pausesSupported = false

// pauseThread has nothing to set here: pauses are refused (pauseOnce).
func pauseThread() (release func(), realtime bool) { return func() {}, false }

// pauseOnce refuses: the pausing thread's priority and exact sleep are
// Linux's.
func pauseOnce(int, time.Duration) (Window, error) {
	return Window{}, errors.New("pauses are implemented on Linux only")
}

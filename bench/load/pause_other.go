//go:build !linux

package load

import "time"

// pausesSupported is false: Pauses.Validate refuses pauses here before
// any run.
const pausesSupported = false

// pauseThread has nothing to set here: pauses are refused (pauseOnce).
func pauseThread() (release func(), realtime bool) { return func() {}, false }

// pauseOnce refuses, as Pauses.Validate does before any run.
func pauseOnce(int, time.Duration) (Window, error) {
	return Window{}, errPausesUnsupported
}

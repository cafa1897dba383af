//go:build !unix

package main

import "errors"

// syncDisks is load.Options.Settle with -sync; this system has no sync(2)
// for it, so the run is refused rather than measured unsettled: give
// -sync=false.
func syncDisks() error {
	return errors.New("-sync: this system has no sync(2); give -sync=false")
}

//go:build !unix

package dirlock

import (
	"errors"
	"os"
)

// flock is not available: marketd's data-directory lock needs flock(2).
func flock(*os.File, bool) error {
	return errors.New("dirlock: flock(2) is not available on this system")
}

package load

import (
	"fmt"
	"io"
	"time"
)

// progress writes a line every second, overwriting the last (for a
// terminal), until done receives; then it ends the line.
func progress(w io.Writer, name string, start time.Time, recs []*recorder, done chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-done:
			_, _ = fmt.Fprintln(w) // a progress line lost is no error of the run
			return
		case now := <-t.C:
			var n, failed int64
			for _, r := range recs {
				n += r.done.Load()
				failed += r.failed.Load()
			}
			_, _ = fmt.Fprintf(w, "\r%-10s %5.0fs %9d requests %8d/s last second, %d not 2xx   ",
				name, now.Sub(start).Seconds(), n, n-last, failed)
			last = n
		}
	}
}

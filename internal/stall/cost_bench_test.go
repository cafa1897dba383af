package stall

import (
	"runtime/trace"
	"testing"
)

// BenchmarkHandOff measures what a running flight recorder adds to a
// goroutine hand-off (a send that wakes a parked receiver, and its
// answer: two blocks and two wake-ups, each an event with its stack),
// the scheduler work a trade request does several times over (the
// caller to its market, the market to the log, the log's releaser back):
// off, and on as -stall-dir keeps it (docs/PERFORMANCE.md, "The stall
// recorder's cost and what it caught").
func BenchmarkHandOff(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			if on {
				fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: DefaultWindow, MaxBytes: DefaultMaxFileBytes / 2})
				if err := fr.Start(); err != nil {
					b.Fatal(err)
				}
				defer fr.Stop()
			}
			ping, pong := make(chan int), make(chan int)
			go func() {
				for v := range ping {
					pong <- v
				}
				close(pong)
			}()
			b.ResetTimer()
			for i := range b.N {
				ping <- i
				<-pong
			}
			b.StopTimer()
			close(ping)
			<-pong
		})
	}
}

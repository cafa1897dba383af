package load

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteText writes the comparison as a person reads it: one line per run,
// the merged figures per target, the ratios.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	open := len(c.Runs) > 0 && c.Runs[0].Mode == "open"
	fmt.Fprintf(&b, "%-11s %5s %9s %9s %8s %8s %8s %8s %8s %8s %8s", "target", "round", "req/s", "2xx/s", "not-2xx",
		"p50", "p90", "p99", "p99.9", "p99.99", "max")
	if open {
		fmt.Fprintf(&b, " %9s %7s %8s", "intended", "late", "not-sent")
	}
	b.WriteString("   (latency in ms)\n")
	for _, r := range c.Runs {
		l := r.Latency
		round := "-"
		if r.Round > 0 {
			round = fmt.Sprint(r.Round)
		}
		fmt.Fprintf(&b, "%-11s %5s %9.0f %9.0f %8d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f", r.Target, round, r.AchievedRate,
			r.Throughput, r.Errors(), l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max)
		if open {
			fmt.Fprintf(&b, " %9.0f %7d %8d", r.IntendedRate, r.Late, r.NotSent)
		}
		b.WriteByte('\n')
	}
	if len(c.Runs) > 1 {
		b.WriteString("\nall rounds merged:\n")
		for _, s := range c.Targets {
			l := s.Latency
			fmt.Fprintf(&b, "%-11s 2xx/s median %.0f (range %.0f-%.0f), p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f p99.99 %.3f max %.3f ms, %d not 2xx",
				s.Target, s.ThroughputMedian, s.ThroughputMin, s.ThroughputMax, l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max, s.Errors)
			if open {
				fmt.Fprintf(&b, ", %d late, %d not sent", s.Late, s.NotSent)
			}
			b.WriteByte('\n')
		}
	}
	for _, rt := range c.Ratios {
		if open {
			// Every target was sent the same rate: throughput ratios say
			// nothing, the latencies above do.
			break
		}
		fmt.Fprintf(&b, "ratio %s/%s (2xx/s, same round):", rt.Of, rt.Over)
		for _, x := range rt.PerRound {
			fmt.Fprintf(&b, " %.3f", x)
		}
		fmt.Fprintf(&b, "; median %.3f\n", rt.Median)
	}
	writeCPU(&b, c.Runs)
	for _, r := range c.Runs {
		writeSnapshots(&b, r)
		writeCollections(&b, r)
		writePauses(&b, r)
	}
	if len(c.Runs) > 0 {
		writeSlowest(&b, c.Runs[0])
	}
	b.WriteString("status counts:\n")
	for _, r := range c.Runs {
		if r.Round > 0 {
			fmt.Fprintf(&b, "  %s round %d: %s\n", r.Target, r.Round, r.StatusLine())
		} else {
			fmt.Fprintf(&b, "  %s: %s\n", r.Target, r.StatusLine())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runName names a run in the report's lines.
func runName(r *Result) string {
	if r.Round > 0 {
		return fmt.Sprintf("%s round %d", r.Target, r.Round)
	}
	return r.Target
}

// writeSnapshots writes the snapshots taken during r and the latency of
// the seconds with one against that of the others.
func writeSnapshots(b *strings.Builder, r *Result) {
	writeSplit(b, r, counted(len(r.Snapshots), "snapshot", "snapshots")+", at", r.Snapshots, func(s Second) bool { return s.Snapshot },
		"seconds with a snapshot", r.DuringSnapshots, r.OutsideSnapshots)
}

// writeCollections writes the windows in which the server's garbage
// collections ended during r and the latency of the seconds that overlap
// one against that of the others.
func writeCollections(b *strings.Builder, r *Result) {
	ended := 0
	for _, sp := range r.Collections {
		ended += sp.Ended
	}
	writeSplit(b, r, counted(ended, "server garbage collection", "server garbage collections")+", ended in", r.Collections, func(s Second) bool { return s.Collection },
		"seconds with a collection", r.DuringCollections, r.OutsideCollections)
}

// writePauses writes the pauses of the server during r, their shortest
// and longest, and the latency of the seconds with one against that of
// the others.
func writePauses(b *strings.Builder, r *Result) {
	if len(r.Pauses) == 0 {
		return
	}
	shortest, longest := math.Inf(1), 0.0
	for _, sp := range r.Pauses {
		ms := (sp.EndS - sp.StartS) * 1000
		shortest, longest = min(shortest, ms), max(longest, ms)
	}
	what := fmt.Sprintf("%s of %.1f-%.1f ms", counted(len(r.Pauses), "pause", "pauses"), shortest, longest)
	if !r.PausesRealtime {
		what += " (the pausing thread's real-time priority refused: a pause may outlast its setting)"
	}
	writeSplit(b, r, what+", at", r.Pauses, func(s Second) bool { return s.Paused },
		"seconds with a pause", r.DuringPauses, r.OutsidePauses)
}

// counted returns n and the noun, singular for one.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeSplit writes spans (nothing without any), how many of r's seconds
// are touched, and the latency of those seconds (named during) against
// that of the others. A span in which more than one collection ended
// says how many.
func writeSplit(b *strings.Builder, r *Result, what string, spans []Span, touched func(Second) bool, during string, in, out *Latency) {
	if len(spans) == 0 {
		return
	}
	seconds := 0
	for _, s := range r.Series {
		if touched(s) {
			seconds++
		}
	}
	fmt.Fprintf(b, "%s: %s", runName(r), what)
	for _, sp := range spans {
		fmt.Fprintf(b, " %.1f-%.1f s", sp.StartS, sp.EndS)
		if sp.Ended > 1 {
			fmt.Fprintf(b, " (%d)", sp.Ended)
		}
	}
	fmt.Fprintf(b, " of the run (%d of its %d seconds)\n", seconds, len(r.Series))
	width := len(during) + 1
	for _, x := range []struct {
		name string
		l    *Latency
	}{{during, in}, {"other seconds", out}} {
		if x.l != nil {
			fmt.Fprintf(b, "  %-*s p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms\n", width, x.name+":", x.l.P50, x.l.P99, x.l.P999, x.l.Max)
		}
	}
}

// writeSlowest writes r's slowest requests, to be found in a trace.
func writeSlowest(b *strings.Builder, r *Result) {
	if len(r.Slowest) == 0 {
		return
	}
	fmt.Fprintf(b, "slowest requests of %s (ms from the run's start, UTC time, latency ms, op, status):\n", runName(r))
	for _, s := range r.Slowest {
		fmt.Fprintf(b, "  %10.3f  %s  %8.3f  %-9s %s\n", s.AtMs, s.At.Format("15:04:05.000000"), s.LatencyMs, s.Op, s.Status)
	}
}

// writeCPU writes each run's CPU time per request: the load generator's
// process and the server's.
func writeCPU(b *strings.Builder, runs []*Result) {
	header := false
	for _, r := range runs {
		if r.CPU == nil {
			continue
		}
		if !header {
			b.WriteString("CPU per request (us, user+system):\n")
			header = true
		}
		switch {
		case r.CPU.ServerInProcess:
			fmt.Fprintf(b, "  %-22s load generator with the handler in it %.2f\n", runName(r)+":", r.CPU.LoadUs)
		case r.CPU.ServerUs != nil:
			fmt.Fprintf(b, "  %-22s load generator %.2f, server %.2f, both %.2f\n", runName(r)+":", r.CPU.LoadUs, *r.CPU.ServerUs,
				r.CPU.LoadUs+*r.CPU.ServerUs)
		default:
			fmt.Fprintf(b, "  %-22s load generator %.2f (server not measured)\n", runName(r)+":", r.CPU.LoadUs)
		}
	}
}

package load

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Comparison is the outcome of Compare: every run, in the order run, and
// per target the runs merged.
type Comparison struct {
	Runs    []*Result        `json:"runs"`
	Targets []*TargetSummary `json:"targets"`
	// Ratios compare the first target's throughput with each other
	// target's, round by round.
	Ratios []Ratio `json:"ratios,omitempty"`
}

// TargetSummary merges one target's runs: the median throughput and its
// range over the rounds, and the latency of all its requests.
type TargetSummary struct {
	Target           string  `json:"target"`
	ThroughputMedian float64 `json:"throughput_median"`
	ThroughputMin    float64 `json:"throughput_min"`
	ThroughputMax    float64 `json:"throughput_max"`
	Latency          Latency `json:"latency_ms"`
	Requests         int64   `json:"requests"`
	Errors           int64   `json:"errors"`
	Late             int64   `json:"late,omitempty"`
	NotSent          int64   `json:"not_sent,omitempty"`
	// Series is the target's time series, its rounds one after another.
	Series []Second `json:"-"`
}

// Ratio is the first target's throughput over another's, per round (in
// the same round, so under the same conditions of a shared machine), with
// the median.
type Ratio struct {
	Of       string    `json:"of"`
	Over     string    `json:"over"`
	PerRound []float64 `json:"per_round"`
	Median   float64   `json:"median"`
}

// Compare runs the same load against each target in turn, rounds times,
// the order rotating each round so that no target always follows
// another; before each measured run, a warmup run (not recorded) of
// warmup. The first target is the one compared.
func Compare(ctx context.Context, targets []*Target, rounds int, warmup time.Duration, o Options) (*Comparison, error) {
	cmp := &Comparison{}
	byTarget := make(map[string][]*Result)
	for round := range rounds {
		for i := range targets {
			t := targets[(i+round)%len(targets)]
			run := o
			if warmup > 0 {
				var warm Options
				warm, run = o.Warmup(warmup)
				if _, err := Run(ctx, t, warm); err != nil {
					return nil, fmt.Errorf("load: warm up %s: %w", t.Name, err)
				}
			}
			o.Seed++ // each run draws its own requests
			run.Seed = o.Seed
			r, err := Run(ctx, t, run)
			if err != nil {
				return nil, err
			}
			r.Round = round + 1
			cmp.Runs = append(cmp.Runs, r)
			byTarget[t.Name] = append(byTarget[t.Name], r)
		}
	}
	for _, t := range targets {
		cmp.Targets = append(cmp.Targets, summarizeTarget(t.Name, byTarget[t.Name]))
	}
	first := byTarget[targets[0].Name]
	for _, t := range targets[1:] {
		rt := Ratio{Of: targets[0].Name, Over: t.Name}
		for i, r := range byTarget[t.Name] {
			if r.Throughput > 0 {
				rt.PerRound = append(rt.PerRound, first[i].Throughput/r.Throughput)
			}
		}
		rt.Median = median(rt.PerRound)
		cmp.Ratios = append(cmp.Ratios, rt)
	}
	return cmp, nil
}

// MarkSnapshots marks the snapshots of ws in every run of target
// (Result.MarkSnapshots) and in its merged time series.
func (c *Comparison) MarkSnapshots(target string, ws []Window) {
	c.mark(target, func(r *Result) { r.MarkSnapshots(ws) })
}

// MarkCollections marks the windows of ws in which the server's garbage
// collections ended in every run of target (Result.MarkCollections) and
// in its merged time series.
func (c *Comparison) MarkCollections(target string, ws []Window) {
	c.mark(target, func(r *Result) { r.MarkCollections(ws) })
}

// mark calls mark on every run of target, then summarizes its runs again,
// so that its merged time series has the marks too.
func (c *Comparison) mark(target string, mark func(*Result)) {
	var runs []*Result
	for _, r := range c.Runs {
		if r.Target == target {
			mark(r)
			runs = append(runs, r)
		}
	}
	for i, s := range c.Targets {
		if s.Target == target && len(runs) > 0 {
			c.Targets[i] = summarizeTarget(target, runs)
		}
	}
}

// Single wraps one run as a comparison of one target.
func Single(r *Result) *Comparison {
	return &Comparison{Runs: []*Result{r}, Targets: []*TargetSummary{summarizeTarget(r.Target, []*Result{r})}}
}

func summarizeTarget(name string, runs []*Result) *TargetSummary {
	s := &TargetSummary{Target: name}
	h := newTotalHistogram()
	var tp []float64
	for _, r := range runs {
		h.Merge(r.hist)
		tp = append(tp, r.Throughput)
		s.Requests += r.Requests
		s.Errors += r.Errors()
		s.Late += r.Late
		s.NotSent += r.NotSent
		for _, sec := range r.Series {
			sec.T = len(s.Series)
			s.Series = append(s.Series, sec)
		}
	}
	s.Latency = latencyOf(h)
	s.ThroughputMedian, s.ThroughputMin, s.ThroughputMax = median(tp), slices.Min(tp), slices.Max(tp)
	return s
}

// median returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

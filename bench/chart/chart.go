// Package chart draws marketd-load's time series as PNG and SVG files a
// person can open: latency percentiles over time, and throughput over
// time (gonum.org/v1/plot).
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"marketd/bench/load"
)

const (
	width  = 20 * vg.Centimeter
	height = 11 * vg.Centimeter
	// floorMs keeps latencies above zero on the logarithmic axis.
	floorMs = 0.001
)

// Files returns the names Latency and Throughput write for base in dir.
func Files(dir, base string) []string {
	return []string{filepath.Join(dir, base+".png"), filepath.Join(dir, base+".svg")}
}

// Latency draws a target's latency percentiles per second (logarithmic
// axis, milliseconds) into dir/base.png and dir/base.svg, the seconds
// during which a snapshot was being taken shaded grey, those with a
// pause of the server (load.Pauses) pink.
func Latency(dir, base, title string, series []load.Second) error {
	p := plot.New()
	if err := shade(p, series, func(s load.Second) bool { return s.Snapshot }, "snapshot being taken", color.Gray{Y: 225}); err != nil {
		return fmt.Errorf("chart: %s: %w", base, err)
	}
	if err := shade(p, series, func(s load.Second) bool { return s.Paused }, "server paused", color.RGBA{R: 255, G: 215, B: 225, A: 255}); err != nil {
		return fmt.Errorf("chart: %s: %w", base, err)
	}
	p.Title.Text = title
	p.X.Label.Text = "second of the measured runs"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	line := func(get func(load.Latency) float64) plotter.XYs {
		xys := make(plotter.XYs, len(series))
		for i, s := range series {
			xys[i].X, xys[i].Y = float64(s.T), max(get(s.LatencyP), floorMs)
		}
		return xys
	}
	if err := plotutil.AddLines(p,
		"p50", line(func(l load.Latency) float64 { return l.P50 }),
		"p90", line(func(l load.Latency) float64 { return l.P90 }),
		"p99", line(func(l load.Latency) float64 { return l.P99 }),
		"p99.9", line(func(l load.Latency) float64 { return l.P999 }),
		"max", line(func(l load.Latency) float64 { return l.Max }),
	); err != nil {
		return fmt.Errorf("chart: %s: %w", base, err)
	}
	return save(p, dir, base)
}

// shade adds a band of colour c, labelled label, behind every run of
// seconds marked, spanning the latencies drawn.
func shade(p *plot.Plot, series []load.Second, marked func(load.Second) bool, label string, c color.Color) error {
	lo, hi := math.Inf(1), floorMs
	labelled := false
	for _, s := range series {
		lo, hi = min(lo, max(s.LatencyP.P50, floorMs)), max(hi, s.LatencyP.Max)
	}
	for i := 0; i < len(series); i++ {
		if !marked(series[i]) {
			continue
		}
		j := i
		for j+1 < len(series) && marked(series[j+1]) {
			j++
		}
		x0, x1 := float64(series[i].T)-0.5, float64(series[j].T)+0.5
		band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: lo}, {X: x1, Y: lo}, {X: x1, Y: hi}, {X: x0, Y: hi}})
		if err != nil {
			return err
		}
		band.Color = c
		band.LineStyle.Width = 0
		p.Add(band)
		if !labelled {
			p.Legend.Add(label, band)
			labelled = true
		}
		i = j
	}
	return nil
}

// Throughput draws the requests answered 2xx per second, and those not
// 2xx, of each target into dir/base.png and dir/base.svg.
func Throughput(dir, base, title string, targets []*load.TargetSummary) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "second of the measured runs"
	p.Y.Label.Text = "requests per second"
	p.Legend.Top = true
	var lines []any
	for _, t := range targets {
		ok, failed := make(plotter.XYs, len(t.Series)), make(plotter.XYs, len(t.Series))
		anyFailed := false
		for i, s := range t.Series {
			ok[i].X, ok[i].Y = float64(s.T), float64(s.OK)
			failed[i].X, failed[i].Y = float64(s.T), float64(s.Errors)
			anyFailed = anyFailed || s.Errors > 0
		}
		lines = append(lines, t.Target+" 2xx", ok)
		if anyFailed {
			lines = append(lines, t.Target+" not 2xx", failed)
		}
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return fmt.Errorf("chart: %s: %w", base, err)
	}
	return save(p, dir, base)
}

func save(p *plot.Plot, dir, base string) error {
	var errs []error
	for _, f := range Files(dir, base) {
		if err := p.Save(width, height, f); err != nil {
			errs = append(errs, fmt.Errorf("chart: save %s: %w", f, err))
		}
	}
	return errors.Join(errs...)
}

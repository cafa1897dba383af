package main

import (
	"fmt"
	"log/slog"

	"marketd/internal/stall"
	"marketd/wal"
)

// validateStall checks the stall recorder's flags: each in its range, and
// none changed without -stall-dir, which alone turns the recorder on.
func (c *config) validateStall() error {
	switch {
	case c.stallThreshold <= 0 || c.stallThreshold > stall.MaxThreshold:
		return fmt.Errorf("-stall-threshold: %v is out of range (0, %v]", c.stallThreshold, stall.MaxThreshold)
	case c.stallWindow < stall.MinWindow || c.stallWindow > stall.MaxWindow:
		return fmt.Errorf("-stall-window: %v is out of range %v-%v", c.stallWindow, stall.MinWindow, stall.MaxWindow)
	case c.stallFiles < 1 || c.stallFiles > stall.MaxFiles:
		return fmt.Errorf("-stall-files: %d is out of range 1-%d", c.stallFiles, stall.MaxFiles)
	case c.stallMaxMiB < 1 || c.stallMaxMiB > stall.MaxMaxFileBytes>>20:
		return fmt.Errorf("-stall-max-mib: %d is out of range 1-%d", c.stallMaxMiB, stall.MaxMaxFileBytes>>20)
	}
	if c.stallDir != "" {
		return nil
	}
	for _, f := range []struct {
		name    string
		changed bool
	}{
		{"-stall-threshold", c.stallThreshold != stall.DefaultThreshold},
		{"-stall-window", c.stallWindow != stall.DefaultWindow},
		{"-stall-files", c.stallFiles != stall.DefaultFiles},
		{"-stall-max-mib", c.stallMaxMiB != stall.DefaultMaxFileBytes>>20},
	} {
		if f.changed {
			return fmt.Errorf("%s: needs -stall-dir, the directory of the traces (without it the stall recorder is off)", f.name)
		}
	}
	return nil
}

// newStallRecorder returns the stall recorder of c, not started; nil when
// -stall-dir is empty.
func (c *config) newStallRecorder(logger *slog.Logger) (*stall.Recorder, error) {
	if c.stallDir == "" {
		return nil, nil
	}
	rec, err := stall.New(stall.Config{
		Dir: c.stallDir, Threshold: c.stallThreshold, Window: c.stallWindow,
		Files: c.stallFiles, MaxFileBytes: int64(c.stallMaxMiB) << 20, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("stall recorder: %w", err)
	}
	return rec, nil
}

// commitObservers tells each of its observers of every commit, in order.
type commitObservers []wal.Observer

// ObserveCommit implements wal.Observer.
func (o commitObservers) ObserveCommit(c wal.Commit) {
	for _, obs := range o {
		obs.ObserveCommit(c)
	}
}

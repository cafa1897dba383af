package stall

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Trace files are named stall-<UTC time>-<kind>.trace, so that their
// names sort in the order they were written; one is written under
// tmpSuffix and renamed once whole, so that a reader never takes a half
// written trace for one.
const (
	filePrefix = "stall-"
	fileSuffix = ".trace"
	tmpSuffix  = ".tmp"
	timeLayout = "20060102T150405.000Z"
	// timeLayoutLog is the log line's time of the first trigger, to the
	// microsecond, to find the stall in the trace's timeline.
	timeLayoutLog = "15:04:05.000000Z"
)

// errTooLarge reports a trace that reached Config.MaxFileBytes.
var errTooLarge = errors.New("trace reached the size bound")

// prepareDir makes dir when missing and removes the half-written traces
// an earlier process left there.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("stall: make directory %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("stall: read directory %s: %w", dir, err)
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, filePrefix) && strings.HasSuffix(name, fileSuffix+tmpSuffix) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("stall: remove half-written trace: %w", err)
			}
		}
	}
	return nil
}

// traces returns the names of the traces in dir, oldest first.
func traces(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("stall: read directory %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if name := e.Name(); e.Type().IsRegular() && strings.HasPrefix(name, filePrefix) && strings.HasSuffix(name, fileSuffix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// write writes the flight recorder's window for t, at now, after removing
// the oldest traces beyond Files-1, and logs the outcome. triggers is how
// many durations past the threshold the trace's window follows.
func (r *Recorder) write(t trigger, now time.Time, triggers uint64) {
	log := r.cfg.Logger
	path, n, err := r.writeFile(t, now)
	if err != nil {
		r.dropped.Add(1)
		log.Error("stall: trace not kept", "trigger", t.kind.String(), "took", t.took, "what", t.what(), "err", err)
		return
	}
	r.written.Add(1)
	log.Warn("stall: trace written", "file", path, "bytes", n, "trigger", t.kind.String(), "took", t.took,
		"ended", t.at.UTC().Format(timeLayoutLog), "what", t.what(), "triggers", triggers, "window", r.cfg.Window)
}

// writeFile makes room for one more trace and writes it, returning its
// path and size.
func (r *Recorder) writeFile(t trigger, now time.Time) (string, int64, error) {
	dir := r.cfg.Dir
	names, err := traces(dir)
	if err != nil {
		return "", 0, err
	}
	for len(names) >= r.cfg.Files {
		if err := os.Remove(filepath.Join(dir, names[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", 0, fmt.Errorf("stall: remove the oldest trace: %w", err)
		}
		names = names[1:]
	}
	name := filePrefix + now.UTC().Format(timeLayout) + "-" + t.kind.String() + fileSuffix
	path := filepath.Join(dir, name)
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, fmt.Errorf("stall: create trace: %w", err)
	}
	n, err := r.fr.WriteTo(&boundedWriter{w: f, left: r.cfg.MaxFileBytes})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("stall: close trace: %w", cerr)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		if errors.Is(err, errTooLarge) {
			err = fmt.Errorf("stall: %w of %d bytes (a shorter window or a larger bound keeps it)", err, r.cfg.MaxFileBytes)
		}
		return "", 0, err
	}
	return path, n, nil
}

// boundedWriter writes to w until left bytes are written, and then fails
// with errTooLarge.
type boundedWriter struct {
	w    io.Writer
	left int64
}

// Write implements io.Writer.
func (b *boundedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > b.left {
		return 0, errTooLarge
	}
	n, err := b.w.Write(p)
	b.left -= int64(n)
	return n, err
}

//go:build scale

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"marketd/bench/baseline"
	"marketd/internal/fstype"
	"marketd/wal"
)

// TestScaleFsyncFloor is the disk's own part of the open loop's tail: one
// goroutine, no HTTP, no log library, no other goroutine to wake, takes the
// records due by an open-loop schedule of FSYNC_FLOOR_RATE (21,666) records
// a second of baseline.RecordBytes each, writes those due with one
// write(2), fsyncs, and counts each record's latency from its scheduled
// arrival to the end of the fsync that made it durable, for
// FSYNC_FLOOR_SECONDS (60) seconds. Whatever tail this loop has, a server
// answering only after its fsync has too: it is what the machine allows
// (docs/PERFORMANCE.md, "The open loop's tail", section 9).
//
// It runs each shape of FSYNC_FLOOR_SHAPES (default "file,segments") in
// turn, on a new temporary directory on disk:
//   - file: one file appended to, as the fsync-only handler does;
//   - segments: the log's shape, 1 MiB segment files
//     (wal.DefaultSegmentSizeBytes): a commit that fills a segment is
//     fsynced, the segment closed and the next one created, and the
//     directory fsynced, as tidwall and the log's writer do.
//
// Run it alone (`make fsync-floor`); anything else on the disk shows in it.
func TestScaleFsyncFloor(t *testing.T) {
	rate := envFloat(t, "FSYNC_FLOOR_RATE", 21666)
	seconds := envFloat(t, "FSYNC_FLOOR_SECONDS", 60)
	shapes := strings.Split(envString("FSYNC_FLOOR_SHAPES", "file,segments"), ",")
	for _, shape := range shapes {
		var segmentBytes int64
		switch shape {
		case "file":
		case "segments":
			segmentBytes = wal.DefaultSegmentSizeBytes
		default:
			t.Fatalf("FSYNC_FLOOR_SHAPES: unknown shape %q (want file or segments)", shape)
		}
		t.Run(shape, func(t *testing.T) {
			f := runFsyncFloor(t, fstype.DiskTempDir(t), rate, time.Duration(seconds*float64(time.Second)), segmentBytes)
			t.Log(f)
		})
	}
}

// fsyncFloor is what one run of the loop saw.
type fsyncFloor struct {
	rate             float64
	began            time.Time
	took             time.Duration
	records, commits int
	segments         int
	latency, fsync   *hdrhistogram.Histogram // microseconds
	slowSeconds      []string                // "s:ms" of the seconds whose slowest record took over 10 ms
	fsyncsOver5      int
	fsyncsOver10     int
	fsyncsOver20     int
}

func (f *fsyncFloor) String() string {
	ms := func(h *hdrhistogram.Histogram, q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	return fmt.Sprintf("began %s UTC, %.1f s, %d records at %.0f/s, %d commits (%.1f records each), %d new segments\n"+
		"  record latency (scheduled arrival to the end of its fsync), ms: p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f p99.99 %.3f max %.3f\n"+
		"  fsync (and, at a new segment, its close, creation and directory fsync), ms: p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f; over 5 ms %d, over 10 ms %d, over 20 ms %d\n"+
		"  seconds whose slowest record took over 10 ms (second:ms): %s",
		f.began.UTC().Format("15:04:05"), f.took.Seconds(), f.records, f.rate, f.commits, float64(f.records)/float64(max(f.commits, 1)), f.segments,
		ms(f.latency, 50), ms(f.latency, 90), ms(f.latency, 99), ms(f.latency, 99.9), ms(f.latency, 99.99), float64(f.latency.Max())/1000,
		ms(f.fsync, 50), ms(f.fsync, 90), ms(f.fsync, 99), ms(f.fsync, 99.9), float64(f.fsync.Max())/1000, f.fsyncsOver5, f.fsyncsOver10, f.fsyncsOver20,
		strings.Join(f.slowSeconds, " "))
}

// runFsyncFloor runs the loop for d in dir, with segments of segmentBytes
// (0: one file).
func runFsyncFloor(t *testing.T, dir string, rate float64, d time.Duration, segmentBytes int64) *fsyncFloor {
	const maxLatencyMicros = 60_000_000
	fl := &fsyncFloor{rate: rate,
		latency: hdrhistogram.New(1, maxLatencyMicros, 3),
		fsync:   hdrhistogram.New(1, maxLatencyMicros, 3)}
	dirFile, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer closeOrFail(t, dirFile)
	segment := 0
	create := func() *os.File {
		segment++
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%020d", segment)), os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := create()
	if err := dirFile.Sync(); err != nil {
		t.Fatal(err)
	}
	var size int64
	buf := make([]byte, 0, wal.DefaultMaxBatchRecords*baseline.RecordBytes)
	record := make([]byte, baseline.RecordBytes)
	perSecondMax := map[int]time.Duration{}

	fl.began = time.Now()
	end := fl.began.Add(d)
	at := func(i int) time.Time { return fl.began.Add(time.Duration(float64(i) / rate * float64(time.Second))) }
	sent := 0
	for {
		now := time.Now()
		if !now.Before(end) {
			break
		}
		due := int(now.Sub(fl.began).Seconds() * rate)
		n := min(due-sent, wal.DefaultMaxBatchRecords)
		if n <= 0 {
			time.Sleep(at(sent + 1).Sub(now))
			continue
		}
		buf = buf[:0]
		for range n {
			buf = append(buf, record...)
		}
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
		size += int64(len(buf))
		began := time.Now()
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if segmentBytes > 0 && size >= segmentBytes {
			// The segment is full: it was just fsynced; the next one is
			// created, and the directory fsynced for its entry.
			closeOrFail(t, f)
			f = create()
			size = 0
			fl.segments++
			if err := dirFile.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		done := time.Now()
		fs := done.Sub(began)
		recordOrFail(t, fl.fsync, fs.Microseconds())
		switch {
		case fs > 20*time.Millisecond:
			fl.fsyncsOver20++
			fallthrough
		case fs > 10*time.Millisecond:
			fl.fsyncsOver10++
			fallthrough
		case fs > 5*time.Millisecond:
			fl.fsyncsOver5++
		}
		for i := sent; i < sent+n; i++ {
			lat := done.Sub(at(i))
			recordOrFail(t, fl.latency, lat.Microseconds())
			sec := int(at(i).Sub(fl.began) / time.Second)
			perSecondMax[sec] = max(perSecondMax[sec], lat)
		}
		sent += n
		fl.commits++
	}
	fl.took = time.Since(fl.began)
	fl.records = sent
	closeOrFail(t, f)
	for s := 0; s <= int(d/time.Second); s++ {
		if m := perSecondMax[s]; m > 10*time.Millisecond {
			fl.slowSeconds = append(fl.slowSeconds, fmt.Sprintf("%d:%.1f", s, float64(m)/1e6))
		}
	}
	return fl
}

func recordOrFail(t *testing.T, h *hdrhistogram.Histogram, v int64) {
	if err := h.RecordValue(max(v, 1)); err != nil {
		t.Fatalf("histogram: %v", err)
	}
}

func closeOrFail(t *testing.T, f *os.File) {
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envFloat(t *testing.T, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return x
}

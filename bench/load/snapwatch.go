package load

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/valyala/fasthttp"
)

const (
	// maxWatchedSnapshots bounds the windows a SnapshotWatch keeps: a
	// snapshot a second for over an hour.
	maxWatchedSnapshots = 4096
	// scrapeTimeout bounds one scrape of /metrics.
	scrapeTimeout = 5 * time.Second
)

// Window is a span of wall-clock time, such as a snapshot being taken.
type Window struct {
	Start, End time.Time
}

// SnapshotWatch learns when marketd took its snapshots by scraping its
// /metrics (docs/API.md, "Health and metrics"): each time marketd_snapshots_total
// grows, the newest snapshot began marketd_snapshot_age_seconds before the
// scrape and took marketd_snapshot_duration_seconds. The server's clock is
// taken to be this machine's (a spawned server shares it). A snapshot
// still being taken when the watch stops is not known.
type SnapshotWatch struct {
	url    string
	client *fasthttp.Client
	every  time.Duration

	mu      sync.Mutex
	windows []Window
	taken   float64
	err     error // the last scrape's failure, if any

	stop chan struct{}
	done chan struct{}
}

// WatchSnapshots starts scraping http://addr/metrics every every until
// Stop.
func WatchSnapshots(addr string, every time.Duration) *SnapshotWatch {
	w := &SnapshotWatch{url: "http://" + addr + "/metrics", every: every, taken: -1,
		client: &fasthttp.Client{ReadTimeout: scrapeTimeout, WriteTimeout: scrapeTimeout, MaxResponseBodySize: 64 << 20},
		stop:   make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *SnapshotWatch) run() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		w.scrape()
		select {
		case <-w.stop:
			w.scrape() // what ended since the last tick
			return
		case <-t.C:
		}
	}
}

// scrape reads the snapshot metrics once and notes a new snapshot.
func (w *SnapshotWatch) scrape() {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(w.url)
	err := w.client.DoTimeout(req, resp, scrapeTimeout)
	now := time.Now()
	if err == nil && resp.StatusCode() != fasthttp.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode())
	}
	var taken, age, took float64
	if err == nil {
		taken, age, took, err = snapshotMetrics(resp.Body())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = fmt.Errorf("load: scrape %s: %w", w.url, err)
		return
	}
	if w.taken >= 0 && taken > w.taken && len(w.windows) < maxWatchedSnapshots {
		start := now.Add(-time.Duration(age * float64(time.Second)))
		w.windows = append(w.windows, Window{Start: start, End: start.Add(time.Duration(took * float64(time.Second)))})
	}
	w.taken, w.err = taken, nil
}

// snapshotMetrics returns the snapshot count, the newest snapshot's age
// and the last one's duration from a /metrics body.
func snapshotMetrics(body []byte) (taken, ageSeconds, tookSeconds float64, err error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return 0, 0, 0, err
	}
	value := func(name string) (float64, error) {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) != 1 {
			return 0, fmt.Errorf("no metric %s", name)
		}
		m := f.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue(), nil
		}
		return m.GetGauge().GetValue(), nil
	}
	if taken, err = value("marketd_snapshots_total"); err != nil {
		return 0, 0, 0, err
	}
	if ageSeconds, err = value("marketd_snapshot_age_seconds"); err != nil {
		return 0, 0, 0, err
	}
	tookSeconds, err = value("marketd_snapshot_duration_seconds")
	return taken, ageSeconds, tookSeconds, err
}

// Stop stops the watch after one last scrape and returns the snapshots
// seen, and the last scrape's failure if the last scrape failed.
func (w *SnapshotWatch) Stop() ([]Window, error) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.windows, w.err
}

// Windows returns the snapshots seen so far.
func (w *SnapshotWatch) Windows() []Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Window(nil), w.windows...)
}

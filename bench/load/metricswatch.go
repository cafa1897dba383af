package load

import (
	"fmt"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

const (
	// maxWatchedSnapshots bounds the snapshot windows a MetricsWatch
	// keeps: a snapshot a second for over an hour.
	maxWatchedSnapshots = 4096
	// maxWatchedCollections bounds its collection windows: one per scrape
	// interval of 250 ms (marketd-load's) for over an hour.
	maxWatchedCollections = 16384
	// scrapeTimeout bounds one scrape of /metrics.
	scrapeTimeout = 5 * time.Second
)

// Window is a span of wall-clock time: a snapshot being taken, or one in
// which some of the server's garbage collections ended.
type Window struct {
	Start, End time.Time
	// Ended counts the garbage collections that ended in a collection
	// window; 0 in a snapshot's.
	Ended int
}

// MetricsWatch learns from the server's /metrics (docs/API.md, "Health and
// metrics"), scraped every so often, when it took its snapshots and when
// its garbage collections ended, to tell the seconds of a run that had
// one from the others: the collector's mark phase over a large heap
// slows the requests of its seconds (docs/PERFORMANCE.md, "The
// 1,000,000-account row's slowest seconds").
//
// Each time marketd_snapshots_total grows, the newest snapshot began
// marketd_snapshot_age_seconds before the scrape and took
// marketd_snapshot_duration_seconds; the server's clock is taken to be
// this machine's (a spawned server shares it). A snapshot still being
// taken when the watch stops is not known.
//
// Each time the count of go_gc_duration_seconds (client_golang's Go
// collector) grows, that many collections ended between the two scrapes:
// the watch keeps that window, no finer; a collection's mark phase may
// have begun before it. A server without the metric has no collection
// windows, and no error for it.
type MetricsWatch struct {
	url    string
	client *fasthttp.Client
	every  time.Duration

	mu          sync.Mutex
	snapshots   []Window
	taken       float64 // marketd_snapshots_total at the last scrape; -1 before
	collections []Window
	collected   int64     // the collections' count at the last scrape that had it; -1 before
	collectedAt time.Time // when that scrape was sent
	err         error     // the last scrape's failure, if any

	stop chan struct{}
	done chan struct{}
}

// WatchMetrics starts scraping http://addr/metrics every every until
// Stop, asking for only the families it reads (metricsQuery).
func WatchMetrics(addr string, every time.Duration) *MetricsWatch {
	w := newMetricsWatch(addr, every)
	go w.run()
	return w
}

// newMetricsWatch returns a watch that has not scraped yet.
func newMetricsWatch(addr string, every time.Duration) *MetricsWatch {
	return &MetricsWatch{url: "http://" + addr + "/metrics?" + metricsQuery(), every: every, taken: -1, collected: -1,
		client: &fasthttp.Client{ReadTimeout: scrapeTimeout, WriteTimeout: scrapeTimeout, MaxResponseBodySize: 64 << 20},
		stop:   make(chan struct{}), done: make(chan struct{})}
}

func (w *MetricsWatch) run() {
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

// scrape reads /metrics once and notes a new snapshot and the collections
// that ended since the last scrape.
func (w *MetricsWatch) scrape() {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(w.url)
	sent := time.Now()
	err := w.client.DoTimeout(req, resp, scrapeTimeout)
	now := time.Now()
	if err == nil && resp.StatusCode() != fasthttp.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode())
	}
	var m serverMetrics
	if err == nil {
		m, err = readMetrics(resp.Body())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.noteCollections(m.collections, sent, now)
		err = m.snapshotsErr
	}
	if err != nil {
		w.err = fmt.Errorf("load: scrape %s: %w", w.url, err)
		return
	}
	if w.taken >= 0 && m.taken > w.taken && len(w.snapshots) < maxWatchedSnapshots {
		start := now.Add(-time.Duration(m.snapshotAgeSeconds * float64(time.Second)))
		w.snapshots = append(w.snapshots, Window{Start: start, End: start.Add(time.Duration(m.snapshotTookSeconds * float64(time.Second)))})
	}
	w.taken, w.err = m.taken, nil
}

// noteCollections notes the collections' count read by a scrape sent at
// sent and answered at now (-1: the server has no such count). The
// collections it adds ended after the last such scrape was sent, when the
// server may already have read its count, and before now. A count that
// fell (another server behind the address) only becomes the new base.
// w.mu must be held.
func (w *MetricsWatch) noteCollections(count int64, sent, now time.Time) {
	if count < 0 {
		return
	}
	if w.collected >= 0 && count > w.collected && len(w.collections) < maxWatchedCollections {
		w.collections = append(w.collections, Window{Start: w.collectedAt, End: now, Ended: int(count - w.collected)})
	}
	w.collected, w.collectedAt = count, sent
}

// Stop stops the watch after one last scrape and returns the last
// scrape's failure if the last scrape failed.
func (w *MetricsWatch) Stop() error {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Snapshots returns the snapshots seen so far.
func (w *MetricsWatch) Snapshots() []Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Window(nil), w.snapshots...)
}

// Collections returns the windows in which the server's garbage
// collections ended, seen so far.
func (w *MetricsWatch) Collections() []Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Window(nil), w.collections...)
}

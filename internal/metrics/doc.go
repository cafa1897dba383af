// Package metrics exports marketd's Prometheus metrics that are not the
// HTTP server's (package transport has those): collectors that read the
// plain atomic counters of core, of the write-ahead log and of the snapshot
// manager when scraped, the log's commit histograms, observed on the log's
// writer goroutine, and the figures of the recovery at start.
//
// Nothing here is global: every metric is registered on the registry that
// cmd/marketd makes and passes down. Names follow Prometheus' conventions
// (marketd_ prefix, base units, _total on counters) and no label carries
// an account, key or market id. docs/OPERATIONS.md lists them all.
package metrics

// Package bench holds the benchmarks of marketd's HTTP path, a real server
// on a loopback port driven by a real HTTP client in the same process, and
// of the bounds that this machine puts on marketd's speed targets.
//
// BenchmarkHTTP (in the package's tests) measures, in one run and over the
// same load driver:
//
//   - noop: a fasthttp server whose handler writes a fixed small JSON body
//     and does no work, the ceiling of the HTTP layer on this machine;
//   - fsync-only: a handler that answers once a group commit (one write,
//     one fsync of a plain file for all the requests waiting) covers its
//     request, and does nothing else: the bound of any endpoint that
//     answers after an fsync, whatever its log;
//   - log-only: a handler that appends a fixed trade record to marketd's
//     log with fsync on and answers once it is durable: the bound of any
//     endpoint on this log;
//   - trade-8-markets and trade-1-market: POST /api/markets/trade with a
//     valid API key, through transport, core and the write-ahead log with
//     fsync on, the trades spread over 8 markets or all on one;
//   - trade-8-markets-fsync-off: the same without fsync, for comparison.
//
// The no-op and fsync-only handlers are package baseline's, the ones
// marketd-load -compare measures against too.
//
// Each reports requests per second, p50 and p99 latency in milliseconds
// and, for the trades, ratio-vs-noop: the trade throughput over the no-op
// throughput measured earlier in the same BenchmarkHTTP invocation (it is
// left out when noop did not run, as with -bench BenchmarkHTTP/trade).
//
// The load driver keeps 64 keep-alive connections busy, one request at a
// time on each: 64 workers share a fasthttp.HostClient with MaxConns 64.
// Each worker trades as its own account with its own key, so that trades
// do not contend on one account, and alternates a buy and a sell of one
// share so that no account runs out of money or shares whatever b.N is.
// b.N is the total number of requests, spread evenly over the workers. Any
// answer other than 200, and any transport error, fails the benchmark.
//
// Setup (accounts, keys and markets, created over HTTP as a client would)
// is outside the timer. The log lives in b.TempDir(); the benchmark fails
// when that directory is in memory (tmpfs, ramfs), where an fsync costs
// nothing: set TMPDIR to a directory on disk. The client and the server
// share the machine's cores, so every figure includes the client's CPU,
// for noop and trades alike.
//
// BenchmarkPipelineFloor runs the shape of core's trade path (callers,
// actor goroutines fed by channels, the log's writer acknowledging) with no
// trading in it, the bound of core's trade benchmarks.
// BenchmarkPipelineLeast runs the same shape with actors that also do the
// least work a correct trade must do, one part more per row, the bound of
// what core's trade path can reach against that floor.
//
// Run with `make bench-http`, `make bench-floor` and `make bench-least`; docs/PERFORMANCE.md
// has the figures.
package bench

// Package baseline serves the reference handlers that marketd's HTTP
// figures are measured against, on the same fasthttp server settings as
// marketd's own server:
//
//   - the no-op handler answers every request with a fixed small JSON body
//     and does no work: the ceiling of the HTTP layer on a machine;
//   - the fsync-only handler answers a request once a group commit (one
//     write and one fsync of a plain file for all the requests waiting)
//     covers it, and does nothing else: the bound of any endpoint that
//     answers only after an fsync, whatever its log (docs/PERFORMANCE.md,
//     "Bounds of this machine");
//   - the least-trade handler answers POST /api/markets/trade doing the
//     least a correct trade request under docs/API.md must do (the key,
//     the body, one hand-off to a market's goroutine doing the least
//     trade, the group commit of its record, the answer): the bound of
//     marketd's trade endpoint (docs/PERFORMANCE.md, "The least trade
//     request").
//
// The fsync-only and least-trade handlers' group commit (GroupCommit) can
// wait between commits as marketd's log does with its commit interval,
// so that marketd is also measured against floors that work as it does
// (docs/PERFORMANCE.md, "Floors that wait as marketd does").
//
// The benchmarks of package bench and the -compare mode of marketd-load
// both use them, so that their figures are measured against the same
// handlers.
package baseline

// Package load drives a marketd server with simulated bots, as the
// marketd-load tool does: Setup registers the bots, creates their API keys
// and the markets through the public API; Run sends a weighted mix of reads
// and writes, with a market skew, in a closed loop (C connections, each
// sending its next request when the last is answered) or an open loop (a
// target rate R, each request due at its own time); Compare alternates the
// same load between targets (marketd and package baseline's handlers);
// Check verifies the server's invariants through the API afterwards.
//
// Latency is recorded in HDR histograms (github.com/HdrHistogram/
// hdrhistogram-go), one per worker, merged once the run ends, since a
// histogram is not safe for concurrent use. Per-second histograms go from
// each worker to one collector goroutine, which merges them into the time
// series.
//
// In the open loop a request's latency runs from the time it was due, not
// from the time it was sent, so that a stall of the server, which delays
// the sending of the requests behind it, shows in the percentiles instead
// of being hidden (coordinated omission; wrk2 and vegeta schedule the same
// way). Each connection has its own schedule at R/C; one that is still
// busy when its next request is due sends it late, counted, and a request
// still unsent when the run ends is counted as not sent.
//
// Every bot is used by one worker only, which keeps what the bot holds
// from the answers it got, so that a sell or a merge is sent only for
// shares the bot has.
package load

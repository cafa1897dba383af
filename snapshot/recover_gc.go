package snapshot

// RecoveryGCPercent is the collector's target (GOGC) for a process to set
// while it runs Recover, and to restore after: recovery builds the whole
// state from nothing, so at the usual target of 100 the collector runs a
// cycle each time the heap doubles and marks the growing state again each
// time. With 1,000,000 accounts in a snapshot and 1,000,000 records after
// it, a restart took 7.9-10.5 s at 100 and 4.5 s at 400 (bench
// TestScaleTimeToReady, docs/PERFORMANCE.md); the heap may grow to five
// times the live state between cycles meanwhile, instead of twice.
// cmd/marketd sets it, and so does BenchmarkRecover, so that the benchmark
// measures recovery as the server runs it.
const RecoveryGCPercent = 400

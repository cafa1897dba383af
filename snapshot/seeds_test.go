//go:build !long

package snapshot_test

// The seeds of the crash tests; the long build adds more (seeds_long_test.go).
var (
	cutSeeds      = []uint64{1}
	snapshotSeeds = []uint64{4}
)

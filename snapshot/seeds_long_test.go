//go:build long

package snapshot_test

// The seeds of the crash tests in the long build (make test runs it).
var (
	cutSeeds      = []uint64{1, 2, 3, 8, 9}
	snapshotSeeds = []uint64{4, 5, 10, 11}
)

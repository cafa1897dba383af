//go:build !long

package core_test

// The size of the property test; the long build runs more (long_test.go).
const (
	propertySequences = 100
)

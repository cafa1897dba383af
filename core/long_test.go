//go:build long

package core_test

// The size of the property test in the long build (make test runs it): the
// same 100 sequences as the short build and 400 more.
const (
	propertySequences = 500
)

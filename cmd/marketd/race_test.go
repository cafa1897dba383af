//go:build race

package main

// raceBuild reports that the tests run with the race detector, so that
// TestMain builds the server with it too.
const raceBuild = true

// Package fstype tells which file system a directory is on and whether it
// keeps its files in memory, where an fsync costs nothing: benchmarks of
// durable writes refuse such a directory rather than report figures that
// no disk gives.
package fstype

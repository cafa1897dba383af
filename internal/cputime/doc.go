// Package cputime reads the CPU time the process (or the calling thread)
// has used, user and system together, for benchmarks that report CPU per
// operation, how much of the machine's cores a pipeline keeps busy, and
// what one step costs on a machine shared with other work.
package cputime

// Package cputime reads the CPU time the process has used, user and
// system together, for benchmarks that report CPU per operation and how
// much of the machine's cores a pipeline keeps busy.
package cputime

// Package spawn runs marketd as a child process for the tools that drive
// it (the load generator's -spawn, the crash drill): start it on a data
// directory and a free loopback port, learn its address from its
// "listening" log line, wait until it is ready, and stop it with SIGTERM or
// kill it with SIGKILL. The child's output is appended to a log file, so
// that a failed run can be investigated.
package spawn

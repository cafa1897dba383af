// Package client is an HTTP client of marketd's API (docs/API.md) for the
// tools that drive a server from outside: the load generator and the
// crash drill. It sends requests over a fasthttp.HostClient with a bound on
// connections and on each request's time, and decodes answers with money
// amounts kept exact (money.Amount).
//
// Calls that expect one status return a *StatusError for any other, which
// quotes the start of the answer; a transport failure (refused, reset,
// timeout) is returned wrapped, so that a crash drill can tell "answered
// with an error" from "no answer".
package client

// Package ratelimit provides the fixed-window request limits of the HTTP
// API: each client (an API key, a session's account, or an IP address) may
// make a route's limit of requests per window.
//
// # Semantics
//
// A window opens at a key's first request after its previous window ended
// and lasts the Limiter's window (60 seconds in production). Each allowed
// request counts; once the count reaches the limit, requests are rejected
// until the window ends, and a rejected request does not count, so a client
// that keeps retrying is not locked out for longer. Decision carries what
// the response headers need: X-RateLimit-Limit, X-RateLimit-Remaining,
// X-RateLimit-Reset (ResetUnix) and, on a 429, Retry-After
// (RetryAfterSeconds).
//
// # Concurrency and memory
//
// The windows live in 64 shards, each a mutex and a map, chosen by a seeded
// hash of the key, so requests of different clients rarely wait on one
// another. A mutex is used rather than an actor because a check is a few
// map operations: a channel round trip would cost more than the work.
// Allow on a key that has a window does not allocate. No lock is held while
// another is taken, so there is no lock order.
//
// The server calls Sweep periodically, which drops ended windows, so memory
// follows the clients active in the last window. Keys come from outside
// (any IP address can send a request), so the number of windows is also
// capped (DefaultMaxKeys); a new key that finds its shard full is refused
// with Decision.Full set, which the caller answers with 503 and Retry-After.
package ratelimit

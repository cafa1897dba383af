// Package transport is marketd's HTTP front end, on valyala/fasthttp and
// fasthttp/router: the route table with each route's scope and
// authentication rules, API keys and sessions, rate limits, strict JSON
// request decoding, and the mapping of core's errors to status codes and
// messages. It holds no trading state: every request is turned into a call
// of the core's Engine, which answers a change only once it is durable.
//
// Checks run in the order of docs/API.md, "Order of checks", the first failure
// answering: routing (404, 405), body size (413), credentials (401),
// session-only routes (403 "Session required"), scope (403 "Insufficient
// scope"), admin role (403 "Admin role required"), rate limit (429), then
// the request's own validation. The route table (routes.go) declares the
// rules of every route; the middleware (access.go) enforces them, so a route
// cannot be added without them.
//
// fasthttp reuses a RequestCtx and its buffers once the handler returns:
// handlers copy what they keep (strings built from the body are copies) and
// never hand the ctx to another goroutine.
package transport

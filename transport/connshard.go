package transport

import "github.com/valyala/fasthttp"

// connShards is how many copies there are of a count that every request
// writes (the route's metrics, the request id's counter), each on cache
// lines of its own, a request writing the copy of its connection
// (connShard): one copy written by every request moved its line between
// the cores at nearly every request (docs/PERFORMANCE.md, "The closed
// loop's server CPU, piece by piece"). Readers add the copies up.
const connShards = 16

// connShard returns the shard of ctx's connection: a connection's requests
// all use one, and fasthttp numbers connections in turn, so that the
// closed loop's connections spread evenly.
func connShard(ctx *fasthttp.RequestCtx) int { return int(ctx.ConnID() % connShards) }

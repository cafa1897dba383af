package transport

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// HeaderRequestID names the header that carries a request's id, in the
// request (kept when valid) and in every response (docs/API.md, "Request
// ids").
const HeaderRequestID = "X-Request-Id"

// MaxRequestIDBytes bounds an incoming request id; a longer one, or one
// with a byte outside printable ASCII, is replaced by a generated one.
const MaxRequestIDBytes = 128

// requestIDs generates request ids: a random prefix drawn once per process
// and a counter, so that ids are unique across restarts without a call to
// crypto/rand per request (generating one costs an atomic add and a hex
// encoding into a stack buffer). The counter is one per connection shard
// (connShard), its number in the top byte: unique while no shard counts
// 2^56 ids, 2,000 years at a million a second.
type requestIDs struct {
	prefix [16]byte // 8 random bytes as hex
	shards [connShards]struct {
		next atomic.Uint64
		_    [64 - 8]byte
	}
}

// idShardShift places a shard's number above its counter in an id.
const idShardShift = 56

func newRequestIDs() *requestIDs {
	var g requestIDs
	var b [8]byte
	// crypto/rand's Read never fails (Go 1.24 and later crash the program
	// instead of returning an error).
	_, _ = rand.Read(b[:])
	hex.Encode(g.prefix[:], b[:])
	return &g
}

// headerRequestID is HeaderRequestID as fasthttp's canonical key: with
// it, setting and reading the header skip normalizing the name (fasthttp
// normalizes request header names as it parses them).
var headerRequestID = []byte(HeaderRequestID)

// set gives the response the request's id, the incoming one when valid,
// else a new one.
func (g *requestIDs) set(ctx *fasthttp.RequestCtx) {
	if in := ctx.Request.Header.PeekCanonical(headerRequestID); validRequestID(in) {
		ctx.Response.Header.SetCanonical(headerRequestID, in)
		return
	}
	var id [len(g.prefix) + 1 + 16]byte
	copy(id[:], g.prefix[:])
	id[len(g.prefix)] = '-'
	shard := connShard(ctx)
	v := uint64(shard)<<idShardShift | g.shards[shard].next.Add(1)
	// The counter's 8 bytes, most significant first, two digits each from
	// hexPairs: about 100 instructions fewer than hex.Encode of a copy.
	for i := range 8 {
		binary.LittleEndian.PutUint16(id[len(g.prefix)+1+2*i:], hexPairs[byte(v>>(56-8*i))])
	}
	ctx.Response.Header.SetCanonical(headerRequestID, id[:])
}

// validRequestID reports whether id may be kept: 1 to MaxRequestIDBytes
// bytes of printable ASCII (space to tilde).
func validRequestID(id []byte) bool {
	if len(id) == 0 || len(id) > MaxRequestIDBytes {
		return false
	}
	for _, c := range id {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// withRequestID wraps the server's handler so that every answer, errors
// and panics included, carries X-Request-Id. The id is set before the
// handler runs, so that requestID can read it; the one handler that resets
// the response, recoverPanic, sets it back (TestRequestID checks every
// kind of answer).
func (s *Server) withRequestID(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		s.ids.set(ctx)
		h(ctx)
	}
}

// requestID returns the id of the request being answered, for log lines
// and error bodies. It is only valid while the handler runs.
func requestID(ctx *fasthttp.RequestCtx) string {
	return string(ctx.Response.Header.PeekCanonical(headerRequestID))
}

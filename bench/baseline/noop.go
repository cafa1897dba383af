package baseline

import (
	"net"

	"github.com/valyala/fasthttp"
)

// NoopBody is the no-op handler's whole answer: small, fixed JSON.
const NoopBody = `{"ok":true}`

// AnswerNoop writes the no-op handler's whole answer, 200 and NoopBody,
// whatever the request.
func AnswerNoop(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(NoopBody)
}

// ServeNoop serves the no-op handler on ln until Close.
func ServeNoop(ln net.Listener) *Server {
	return serve(ln, "noop", AnswerNoop, nil)
}

package transport

import (
	"github.com/valyala/fasthttp"
)

// Most handlers are the same steps (docs/ARCHITECTURE.md, "A request, from
// the socket to the engine"): decode the body strictly, validate it into a
// core request, call the engine, and answer its result or return its
// error, which serve maps through the one error table. withBody and
// respond say the first and the last step once; what a handler keeps is
// its own validation and its engine call.

// handler is a route's handler: it runs for an admitted caller, and an
// error it returns is answered by serve.
type handler = func(ctx *fasthttp.RequestCtx, c *caller) error

// withBody adapts a handler of a strictly decoded body of type B (package
// strictjson: unknown fields, wrong types and trailing data are a 400
// naming the field) to a route's handler.
func withBody[B any](h func(ctx *fasthttp.RequestCtx, c *caller, body *B) error) handler {
	return func(ctx *fasthttp.RequestCtx, c *caller) error {
		var body B
		if err := decodeBody(ctx, &body); err != nil {
			return err
		}
		return h(ctx, c, &body)
	}
}

// respond returns the function that answers an engine call's result,
// rendered by render, with status; or returns the call's error. It reads
// as the handler's last line: return respond(ctx, 200, render)(s.eng.X(...)).
func respond[R, A any](ctx *fasthttp.RequestCtx, status int, render func(R) A) func(R, error) error {
	return func(r R, err error) error {
		if err != nil {
			return err
		}
		return writeJSON(ctx, status, render(r))
	}
}

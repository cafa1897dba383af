// Dispatch: the router, the access checks around each handler, and the JSON
// answers for what no handler serves (unknown paths and methods, bodies
// over the limit, malformed requests, panics).

package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// newRouter registers every route of the table behind the access checks,
// with JSON answers for unknown paths, wrong methods and panics.
func (s *Server) newRouter() *router.Router {
	r := router.New()
	// Redirects and automatic OPTIONS answers would not be JSON.
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleOPTIONS = false
	r.HandleMethodNotAllowed = true
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, errNotFound)
		s.unrouted(ctx)
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		// The router lists OPTIONS in Allow even with HandleOPTIONS off,
		// where OPTIONS itself gets 405.
		allow := strings.Split(string(ctx.Response.Header.Peek(fasthttp.HeaderAllow)), ", ")
		allow = slices.DeleteFunc(allow, func(m string) bool { return m == fasthttp.MethodOptions || m == "" })
		ctx.Response.Header.Set(fasthttp.HeaderAllow, strings.Join(allow, ", "))
		writeError(ctx, errMethod)
		s.unrouted(ctx)
	}
	r.PanicHandler = s.recoverPanic
	for _, rt := range s.routes() {
		h := s.observe(rt.path, rt.method, s.serve(&rt))
		// route bypasses the router's PanicHandler: only a handler that
		// recovers its own panics, as the metrics' wrapper does, may be
		// handed the trade there. A server without metrics routes it.
		if rt.method == fasthttp.MethodPost && rt.path == pathTrade && s.metrics != nil {
			s.tradeRoute = h
		}
		r.Handle(rt.method, rt.path, h)
	}
	// Health and metrics: no credentials, no rate limit, and they answer
	// while recovering (docs/API.md, "Health").
	r.GET("/healthz", s.observe("/healthz", fasthttp.MethodGet, s.healthz))
	r.GET("/readyz", s.observe("/readyz", fasthttp.MethodGet, s.readyz))
	if s.cfg.ServeMetrics != nil {
		r.GET("/metrics", s.observe("/metrics", fasthttp.MethodGet, metricsHandler(s.cfg.ServeMetrics, s.log)))
	}
	return r
}

// route serves a request by the router, but for POST pathTrade, the one
// route of the trading hot path, which it hands straight to the handler
// the router holds for it. The router matches the request's original path
// (URI().PathOriginal()) and, the trade's path being static, finds that
// handler for exactly this path and method; its radix walk took about 470
// of the 25,000 instructions of a trade request (docs/PERFORMANCE.md, "The
// trade request's handler, instruction by instruction"). A panic in the
// handler is recovered by its metrics' wrapper (observe), as under the
// router; without metrics tradeRoute is nil and the router serves all.
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	if s.tradeRoute != nil && ctx.IsPost() && string(ctx.Request.URI().PathOriginal()) == pathTrade {
		s.tradeRoute(ctx)
		return
	}
	s.router.Handler(ctx)
}

// observe wraps a route's handler in its metrics (by the route's pattern)
// and the access log.
func (s *Server) observe(path, method string, h fasthttp.RequestHandler) fasthttp.RequestHandler {
	h = s.metrics.instrument(path, method, h, s.recoverPanic)
	if !s.cfg.AccessLog {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		s.logAccess(ctx, path)
	}
}

// unrouted counts and logs an answer given without a route.
func (s *Server) unrouted(ctx *fasthttp.RequestCtx) {
	s.metrics.countUnrouted(ctx)
	if s.cfg.AccessLog {
		s.logAccess(ctx, routeNone)
	}
}

// logAccess logs an answer of 400 or more at info: the route's pattern,
// not the raw path or query, so that nothing a client put there is logged.
func (s *Server) logAccess(ctx *fasthttp.RequestCtx, route string) {
	if status := ctx.Response.StatusCode(); status >= fasthttp.StatusBadRequest {
		// A request refused while fasthttp read it (a body over the limit)
		// has no start time: its line says took=0, not the years since
		// the zero time.
		var took time.Duration
		if start := ctx.Time(); !start.IsZero() {
			took = time.Since(start)
		}
		s.log.Info("request refused", "request_id", requestID(ctx), "method", string(ctx.Method()),
			"route", route, "status", status, "took", took)
	}
}

// serve wraps a route's handler in the recovery gate, the access checks,
// the handling of an Idempotency-Key and the error answer.
func (s *Server) serve(rt *route) fasthttp.RequestHandler {
	support := idemSupportOf(rt)
	return func(ctx *fasthttp.RequestCtx) {
		if !s.gate(ctx) {
			return
		}
		// No handler keeps its caller past its return (pools.go).
		c := s.callers.get()
		err := s.admit(ctx, rt, c)
		if err == nil {
			err = s.handleIdempotent(ctx, rt, c, support)
		}
		if err != nil {
			s.fail(ctx, err)
		}
		s.callers.put(c)
	}
}

// handleIdempotent runs the route's handler for an admitted caller: a
// repeat of an idempotent request is answered from its stored answer
// instead, a key on a route that does not store answers is refused.
func (s *Server) handleIdempotent(ctx *fasthttp.RequestCtx, rt *route, c *caller, support idemSupport) error {
	switch support {
	case idemIgnored:
		return rt.handle(ctx, c)
	case idemRefused:
		if ctx.Request.Header.PeekCanonical(headerIdempotencyKey) != nil {
			return errIdemNotSupported
		}
		return rt.handle(ctx, c)
	}
	req, done, err := s.idempotency(ctx, rt, c)
	if err != nil || done {
		return err
	}
	defer s.release(req)
	c.idem = req
	if req != nil && rt.answer != nil {
		return s.storedCall(ctx, rt, c)
	}
	return rt.handle(ctx, c)
}

// fail answers with the error's status and message; an error no table
// covers is logged with its cause and answered as a 500.
func (s *Server) fail(ctx *fasthttp.RequestCtx, err error) {
	ae, known := toAPIError(err)
	switch {
	case !known:
		s.log.Error("request failed", "request_id", requestID(ctx), "method", string(ctx.Method()),
			"path", string(ctx.Path()), "err", err)
	case ae.status >= fasthttp.StatusInternalServerError:
		// Every 5xx gets one line with its cause (docs/OPERATIONS.md,
		// "Logs"): a 503 is known, so it is a warning, not an error.
		s.log.Warn("request unavailable", "request_id", requestID(ctx), "method", string(ctx.Method()),
			"path", string(ctx.Path()), "status", ae.status, "code", ae.code, "err", err)
	}
	writeError(ctx, ae)
}

// recoverPanic turns a handler's panic into a logged 500: the client gets
// an answer instead of a dropped connection.
func (s *Server) recoverPanic(ctx *fasthttp.RequestCtx, v any) {
	s.log.Error("handler panic", "request_id", requestID(ctx), "method", string(ctx.Method()), "path", string(ctx.Path()),
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	// The reset would take the id with it, and the error body carries it.
	id := requestID(ctx)
	ctx.Response.Reset()
	ctx.Response.Header.Set(HeaderRequestID, id)
	writeError(ctx, errInternal)
}

// transportError answers what fasthttp refuses before routing: a body over
// the limit (413, but 404/405 first when the path or method is unknown,
// as docs/API.md, "Order of checks", orders them), a malformed request (400), a
// timeout (408).
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	s.ids.set(ctx)
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge) && len(ctx.Request.Header.RawHeaders()) == 0:
		// fasthttp resets a request whose chunked body passed the limit,
		// path included, so it cannot be routed here; headerReceived
		// let only routable chunked requests have their body read.
		writeError(ctx, errBodyTooLarge)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		writeError(ctx, s.routeError(ctx, errBodyTooLarge))
	case isTimeout(err):
		writeError(ctx, errTimeout)
	default:
		writeError(ctx, errMalformed)
	}
	s.unrouted(ctx)
}

// headerReceived runs once a request's header is read, before its body.
// A chunked body is read whole before the request is routed, and fasthttp
// resets a request whose chunked body passes the limit, path included; so
// a chunked request that no route takes is answered here without its body
// being read: the router then gives its 404 or 405 before any 413
// (docs/API.md, "Order of checks"), and the connection, with the body unread on
// it, is closed after the answer. A body of declared length needs none of
// this: it is refused on its Content-Length, with the path intact.
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if h.ContentLength() != -1 {
		return fasthttp.RequestConfig{}
	}
	var u fasthttp.URI
	if err := u.Parse(h.Host(), h.RequestURI()); err == nil &&
		s.lookupError(string(h.Method()), string(u.Path()), nil) != nil {
		h.SetContentLength(0)
		h.SetConnectionClose()
	}
	return fasthttp.RequestConfig{}
}

// routeError returns 404 or 405 when the request's path or method has no
// route, else fallback.
func (s *Server) routeError(ctx *fasthttp.RequestCtx, fallback *apiError) *apiError {
	if e := s.lookupError(string(ctx.Method()), string(ctx.Path()), ctx); e != nil {
		return e
	}
	return fallback
}

// lookupError returns 404 or 405 when method and path have no route, else
// nil. ctx receives the path's parameters; it may be nil.
func (s *Server) lookupError(method, path string, ctx *fasthttp.RequestCtx) *apiError {
	if h, _ := s.router.Lookup(method, path, ctx); h != nil {
		return nil
	}
	for _, m := range []string{fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodDelete, fasthttp.MethodPatch, fasthttp.MethodPut} {
		if h, _ := s.router.Lookup(m, path, ctx); h != nil {
			return errMethod
		}
	}
	return errNotFound
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fasthttpLogger sends fasthttp's own messages to the server's logger.
type fasthttpLogger struct{ l *slog.Logger }

// Printf logs one fasthttp message.
func (f fasthttpLogger) Printf(format string, args ...any) {
	f.l.Warn("fasthttp: " + fmt.Sprintf(format, args...))
}

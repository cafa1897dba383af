package transport

import (
	"github.com/valyala/fasthttp"
)

// msgLogFailed is the message of every answer once the log has failed.
const msgLogFailed = "Write-ahead log failed: the change is not acknowledged and may not be durable; the server is stopping"

// errLogFailed answers every request once the log has failed.
var errLogFailed = &apiError{status: fasthttp.StatusServiceUnavailable, code: "log_failed", msg: msgLogFailed, retryAfterSeconds: 1}

// withFailStop answers every request 503 once Config.JournalErr reports a
// failure, reads included: after a failed write or fsync, memory may hold
// changes that never became durable, and a read must not show one (a
// balance that the restart will not have). The process exits soon after
// (cmd/marketd); until then the answer says why. Requests already past
// this check that wait on the log get the same answer from the error
// table (core.ErrJournalFailed).
func (s *Server) withFailStop(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.cfg.JournalErr == nil {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) {
		if err := s.cfg.JournalErr(); err != nil {
			writeError(ctx, errLogFailed)
			return
		}
		h(ctx)
	}
}

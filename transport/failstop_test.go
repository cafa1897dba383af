package transport

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"marketd/core"
)

// TestFailStopAnswersEverything503: from the moment the log reports a
// failure, before the process marks the server failed, every API request,
// reads included, and /readyz are answered 503 log_failed; before it,
// requests are served.
func TestFailStopAnswersEverything503(t *testing.T) {
	var failed atomic.Pointer[error]
	ts := newTestServer(t, Config{LogErr: func() error {
		if p := failed.Load(); p != nil {
			return *p
		}
		return nil
	}})
	if r := ts.do(http.MethodGet, "/api/markets/active", auth{}, ""); r.status != http.StatusOK {
		t.Fatalf("before the failure: %d %s", r.status, r.body)
	}
	err := errors.Join(core.ErrJournalFailed, errors.New("fsync: input/output error"))
	failed.Store(&err)
	for _, req := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/markets/active", ""},
		{http.MethodPost, "/api/auth/register", `{"name":"alice","password":"password1"}`},
		{http.MethodGet, "/readyz", ""},
	} {
		r := ts.do(req.method, req.path, auth{}, req.body)
		body := r.json(t)
		if r.status != http.StatusServiceUnavailable || body["code"] != "log_failed" {
			t.Errorf("%s %s after the failure: %d %v, want 503 log_failed", req.method, req.path, r.status, body)
		}
	}
}

// TestJournalFailureIs503: an operation whose record the journal failed
// to make durable maps to 503 log_failed through the error table.
func TestJournalFailureIs503(t *testing.T) {
	ae, ok := toAPIError(errors.Join(errors.New("wal: log failed"), core.ErrJournalFailed))
	if !ok || ae.status != http.StatusServiceUnavailable || ae.code != "log_failed" {
		t.Fatalf("got %+v %v, want 503 log_failed", ae, ok)
	}
}

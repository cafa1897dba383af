package transport

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// seenMessages holds, for each code with a fixed message, the first
// message an answer gave with it, across every test of the package.
var seenMessages sync.Map // code -> message

// checkErrorCode checks one answered error: its code is listed, with its
// status, and a code of fixed message always comes with the same message,
// so that no two situations share a code with different meanings.
func checkErrorCode(status int, code, msg string) error {
	i := slices.IndexFunc(errorCodes, func(c errorCode) bool { return c.code == code })
	if i < 0 {
		return fmt.Errorf("code %q is not in errorCodes", code)
	}
	if want := errorCodes[i].status; status != want {
		return fmt.Errorf("code %q with status %d; it is listed with %d", code, status, want)
	}
	switch code {
	case codeInvalidField, codeInvalidRequest, codeInvalidJSON:
		return nil
	}
	if prev, loaded := seenMessages.LoadOrStore(code, msg); loaded && prev != msg {
		return fmt.Errorf("code %q means both %q and %q", code, prev, msg)
	}
	return nil
}

// TestErrorCodes walks every error the transport can answer without a
// request (the table's rows, the access checks' answers): each has a listed
// code with its status, and no code is given two messages. It also holds
// docs/API.md's list of codes to errorCodes, both ways.
func TestErrorCodes(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range errorCodes {
		if seen[c.code] {
			t.Errorf("code %q listed twice", c.code)
		}
		seen[c.code] = true
	}
	for _, row := range errorTable {
		ae, ok := toAPIError(fmt.Errorf("op: %w", row.err))
		if !ok {
			t.Fatalf("row %v not mapped", row.err)
		}
		if err := checkErrorCode(ae.status, ae.code, ae.msg); err != nil {
			t.Errorf("row %v: %v", row.err, err)
		}
	}
	for _, ae := range []*apiError{errAuthRequired, errSessionRequired, errScope, errAdminRole, errNotFound,
		errMethod, errBodyTooLarge, errInternal, errCredentials, errTimeout, errMalformed,
		rateLimited(1), tooManyClients(1), fieldError("x", "is wrong"), badRequest("both")} {
		if err := checkErrorCode(ae.status, ae.code, ae.msg); err != nil {
			t.Errorf("%v: %v", ae, err)
		}
	}

	doc, err := os.ReadFile("../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d{3}) \\|").FindAllStringSubmatch(string(doc), -1) {
		listed[m[1]] = true
		i := slices.IndexFunc(errorCodes, func(c errorCode) bool { return c.code == m[1] })
		if i < 0 {
			t.Errorf("docs/API.md lists code %q, which errorCodes does not", m[1])
		} else if got := fmt.Sprint(errorCodes[i].status); got != m[2] {
			t.Errorf("docs/API.md lists code %q with %s; errorCodes with %s", m[1], m[2], got)
		}
	}
	for _, c := range errorCodes {
		if !listed[c.code] {
			t.Errorf("code %q is not listed in docs/API.md's table of codes", c.code)
		}
	}
}

// TestRouteErrorCodes walks every route of the route table through the
// error paths every route has: no credentials, malformed credentials, a key
// without the route's scope or a key where a session is needed, a
// non-admin on an admin route, a wrong method, a malformed id in the path,
// and bodies that are not an object, carry an unknown field or are empty.
// Each answer that is an error must carry a listed code with its status,
// and a code of fixed message its one message (parseErrorBody).
func TestRouteErrorCodes(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess := ts.register("walker")
	noScope := ts.newKey(sess, "read")
	tradeKey := ts.newKey(sess, "trade")
	s := &Server{}
	answered := map[string]bool{}
	check := func(t *testing.T, what string, r response) {
		t.Helper()
		if r.status < 400 {
			return
		}
		if _, err := parseErrorBody(r.status, r.header.Get(HeaderRequestID), r.body); err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		var m map[string]any
		_ = json.Unmarshal(r.body, &m)
		answered[m["code"].(string)] = true
	}
	for i, rt := range s.routes() {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			ts := ts.sub(t)
			// A session of its own per route keeps the walk under the
			// session's rate limit.
			sess := ts.register(fmt.Sprintf("walker%d", i))
			path := strings.ReplaceAll(rt.path, "{id}", uuid.NewString())
			body := ""
			if rt.method != "GET" {
				body = "{}"
			}
			check(t, "no credentials", ts.do(rt.method, path, auth{}, body))
			check(t, "malformed key", ts.do(rt.method, path, auth{key: "svc_live_nothex"}, body))
			check(t, "read key", ts.do(rt.method, path, auth{key: noScope}, body))
			check(t, "trade key", ts.do(rt.method, path, auth{key: tradeKey}, body))
			check(t, "session", ts.do(rt.method, path, auth{session: sess}, body))
			check(t, "wrong method", ts.do("PUT", path, auth{session: sess}, body))
			if strings.Contains(rt.path, "{id}") {
				check(t, "malformed id", ts.do(rt.method, strings.ReplaceAll(rt.path, "{id}", "not-a-uuid"), auth{session: sess}, body))
			}
			if rt.method != "GET" {
				for _, b := range []string{`[]`, `{"no_such_field":1}`, `{`, `{}`} {
					check(t, "body "+b, ts.do(rt.method, path, auth{session: sess}, b))
				}
			}
		})
	}
	for _, want := range []string{"authentication_required", "insufficient_scope", "session_required", "admin_required",
		"method_not_allowed", codeInvalidField, codeInvalidJSON} {
		if !answered[want] {
			t.Errorf("the walk never answered %q: it does not reach that path", want)
		}
	}
}

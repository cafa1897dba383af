package transport

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
)

// TestRouteTableRules walks the whole route table and checks the access
// rules each route declares, so that a route cannot be added without them:
// no credentials, a key without the scope, a key on a session-only route,
// and a non-admin on an admin route.
func TestRouteTableRules(t *testing.T) {
	ts := newTestServer(t, Config{})
	user := ts.register("walker")
	keys := map[core.Scopes]string{
		core.ScopeRead:  ts.newKey(user, "trade"),
		core.ScopeTrade: ts.newKey(user, "read"),
		core.ScopeAdmin: ts.newKey(user, "read", "trade"),
		// Either of read and trade suffices: only admin lacks both.
		core.ScopeRead | core.ScopeTrade: ts.newKey(ts.admin(), "admin"),
	}
	fullKey := ts.newKey(user, "read", "trade")
	for _, rt := range ts.srv.routes() {
		path := strings.ReplaceAll(rt.path, "{id}", uuid.NewString())
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			ts := *ts
			ts.t = t
			if rt.access != public {
				ts.expect(ts.do(rt.method, path, auth{}, ""), http.StatusUnauthorized, "Authentication required")
				ts.expect(ts.do(rt.method, path, auth{key: "svc_live_" + strings.Repeat("0", 32)}, ""),
					http.StatusUnauthorized, "Authentication required")
			}
			switch rt.access {
			case sessionOnly:
				ts.expect(ts.do(rt.method, path, auth{key: fullKey}, ""), http.StatusForbidden, "Session required")
			case keyOrSession:
				wrong, ok := keys[rt.scopes]
				if !ok {
					t.Fatalf("no key lacking the scopes %v", rt.scopes)
				}
				ts.expect(ts.do(rt.method, path, auth{key: wrong}, ""), http.StatusForbidden, "Insufficient scope")
			}
			if rt.admin {
				ts.expect(ts.do(rt.method, path, auth{session: user}, ""), http.StatusForbidden, "Admin role required")
			}
		})
	}
}

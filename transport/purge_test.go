package transport

import (
	"net/http"
	"testing"
	"time"

	"marketd/core"
)

// TestKeysPurgedAfterRetention: a revoked key stays in GET /api/keys for
// the retention, then the purge removes it (docs/API.md, "GET /api/keys"),
// and an expired session is purged and refused.
func TestKeysPurgedAfterRetention(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("quinn")
	kept := ts.postKey(user, `{"name":"kept","scopes":["read"]}`)
	gone := ts.postKey(user, `{"name":"gone","scopes":["read"]}`)
	ts.expect(ts.do("DELETE", "/api/keys/"+jsonStr(t, gone, "id"), auth{session: user}, ""), http.StatusOK, "")
	listed := func(session string) int {
		t.Helper()
		r := ts.do("GET", "/api/keys", auth{session: session}, "")
		ts.expect(r, http.StatusOK, "")
		return int(jsonInt(t, decodeExact(t, r.body), "count"))
	}

	clk.Advance(core.KeyRetention - time.Hour)
	fresh := ts.login("quinn", "password-quinn")
	if _, err := ts.eng.PurgeAuth(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := listed(fresh); n != 2 {
		t.Fatalf("%d keys listed within the retention, want 2", n)
	}
	// The first session expired after 7 days (and was purged): refused.
	ts.expect(ts.do("GET", "/api/keys", auth{session: user}, ""), http.StatusUnauthorized, "Authentication required")

	clk.Advance(2 * time.Hour)
	fresh = ts.login("quinn", "password-quinn")
	if _, err := ts.eng.PurgeAuth(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := ts.do("GET", "/api/keys", auth{session: fresh}, "")
	ts.expect(r, http.StatusOK, "")
	list := decodeExact(t, r.body)
	if n := jsonInt(t, list, "count"); n != 1 || listedKey(t, list, jsonStr(t, kept, "id")) == nil {
		t.Fatalf("keys past the retention %v, want only %s", list["keys"], jsonStr(t, kept, "id"))
	}
}

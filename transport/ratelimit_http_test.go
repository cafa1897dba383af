package transport

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
)

// Tests of the rate limits as clients see them (docs/API.md, "Rate limits",
// "Order of checks"): tiers, headers, windows on a test clock, sessions,
// anonymous callers, and where the limit stands in the order of checks.

// expectRate fails unless r carries the rate-limit headers with these
// values.
func expectRate(t *testing.T, r response, limit, remaining int, reset time.Time) {
	t.Helper()
	got := rateLimitOf(t, r)
	want := rateLimitHeaders{present: true, limit: limit, remaining: remaining, reset: reset.Unix()}
	if got != want {
		t.Fatalf("rate-limit headers %+v, want %+v; status %d", got, want, r.status)
	}
}

// expectLimited fails unless r is the 429 of an exhausted window ending at
// reset, as seen at now.
func expectLimited(t *testing.T, ts *testServer, r response, limit int, reset, now time.Time) {
	t.Helper()
	ts.expect(r, http.StatusTooManyRequests, "Rate limit exceeded")
	expectRate(t, r, limit, 0, reset)
	wait := reset.Sub(now)
	want := int((wait + time.Second - 1) / time.Second)
	if got := retryAfterOf(t, r); got != max(want, 1) {
		t.Fatalf("Retry-After %d, want %d (%v until the window ends)", got, max(want, 1), wait)
	}
}

// TestStandardKeyWindow walks one window of a standard key on a test
// clock: 60 requests with Remaining counting down, 429s that neither count
// nor move the window, and a new window opened by the first request after
// the old one ended.
func TestStandardKeyWindow(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("rita")
	key := ts.newKey(user, "read")
	start := clk.Now()
	reset := start.Add(time.Minute)

	for i := range standardPerMinute {
		r := ts.do("GET", "/api/agents/me", auth{key: key}, "")
		ts.expect(r, http.StatusOK, "")
		expectRate(t, r, standardPerMinute, standardPerMinute-1-i, reset)
	}
	expectLimited(t, ts, ts.do("GET", "/api/agents/me", auth{key: key}, ""), standardPerMinute, reset, clk.Now())

	clk.Advance(30*time.Second + 500*time.Millisecond)
	for range 3 {
		expectLimited(t, ts, ts.do("GET", "/api/agents/me", auth{key: key}, ""), standardPerMinute, reset, clk.Now())
	}
	clk.Advance(29*time.Second + 499*time.Millisecond)
	expectLimited(t, ts, ts.do("GET", "/api/agents/me", auth{key: key}, ""), standardPerMinute, reset, clk.Now())

	// The window began at the first request, so it ends a minute later to
	// the nanosecond; the next one begins with the first request after,
	// here 15 s later.
	clk.Advance(time.Millisecond + 15*time.Second)
	r := ts.do("GET", "/api/agents/me", auth{key: key}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, standardPerMinute, standardPerMinute-1, clk.Now().Add(time.Minute))

	// Every request made with the key counts in total_requests, refused
	// ones included: 60 + 5 + 1.
	list := decodeExact(t, ts.do("GET", "/api/keys", auth{session: user}, "").body)
	if got := jsonInt(t, listedKey(t, list, mustKeyID(t, ts, key)), "total_requests"); got != 66 {
		t.Errorf("total_requests %d, want 66", got)
	}
}

// TestRateLimitHeadersEverywhere checks that every authenticated answer
// carries the headers, errors of the handlers and public routes included,
// and that each answer that passed the limit counted.
func TestRateLimitHeadersEverywhere(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("sam")
	key := ts.newKey(user, "read", "trade")
	reset := clk.Now().Add(time.Minute)
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
	}{
		{"success", "GET", "/api/agents/me", "", http.StatusOK},
		{"public route", "GET", "/api/markets/active", "", http.StatusOK},
		{"invalid body", "POST", "/api/markets/trade", `{"side":"maybe"}`, http.StatusBadRequest},
		{"unknown market", "GET", "/api/markets/" + uuid.NewString(), "", http.StatusNotFound},
		{"malformed id", "GET", "/api/markets/x", "", http.StatusBadRequest},
		{"listing", "GET", "/api/keys", "", http.StatusOK},
	}
	for _, who := range []struct {
		name  string
		a     auth
		limit int
	}{{"key", auth{key: key}, standardPerMinute}, {"session", auth{session: user}, premiumPerMinute}} {
		t.Run(who.name, func(t *testing.T) {
			ts := ts.sub(t)
			remaining := who.limit
			if who.name == "session" {
				remaining-- // the key was created with the session
			}
			for _, tc := range tests {
				r := ts.do(tc.method, tc.path, who.a, tc.body)
				ts.expect(r, tc.status, "")
				remaining--
				expectRate(t, r, who.limit, remaining, reset)
			}
		})
	}
	// Handler refusals of the session-only routes count as well.
	r := ts.do("POST", "/api/keys", auth{session: user}, `{"name":"k","scopes":["read"],"rate_limit_tier":"premium"}`)
	ts.expect(r, http.StatusForbidden, "Admin role required")
	expectRate(t, r, premiumPerMinute, premiumPerMinute-len(tests)-2, reset)
	r = ts.do("DELETE", "/api/keys/"+uuid.NewString(), auth{session: user}, "")
	ts.expect(r, http.StatusNotFound, "Key not found")
	expectRate(t, r, premiumPerMinute, premiumPerMinute-len(tests)-3, reset)
}

// TestRefusedBeforeLimitDoNotCount checks that requests refused by an
// earlier check (scope, session-only, admin role) do not use the window:
// only what passes the limit counts.
func TestRefusedBeforeLimitDoNotCount(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("tina")
	key := ts.newKey(user, "read")
	for range 5 {
		ts.expect(ts.do("POST", "/api/markets/trade", auth{key: key}, `{}`), http.StatusForbidden, "Insufficient scope")
		ts.expect(ts.do("POST", "/api/keys", auth{key: key}, `{}`), http.StatusForbidden, "Session required")
		ts.expect(ts.do("GET", "/api/admin/stats", auth{key: key}, ""), http.StatusForbidden, "Insufficient scope")
	}
	r := ts.do("GET", "/api/agents/me", auth{key: key}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, standardPerMinute, standardPerMinute-1, clk.Now().Add(time.Minute))
}

// TestPremiumKeyLimit checks the premium tier's 300 requests a window,
// with a premium key that only an admin can create.
func TestPremiumKeyLimit(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	adminSession, _ := ts.adminWithID()
	key := jsonStr(t, ts.postKey(adminSession, `{"name":"fast","scopes":["read"],"rate_limit_tier":"premium"}`), "key")
	reset := clk.Now().Add(time.Minute)
	for i := range premiumPerMinute {
		r := ts.do("GET", "/api/markets/active", auth{key: key}, "")
		ts.expect(r, http.StatusOK, "")
		if i == 0 || i == premiumPerMinute-1 {
			expectRate(t, r, premiumPerMinute, premiumPerMinute-1-i, reset)
		}
	}
	expectLimited(t, ts, ts.do("GET", "/api/markets/active", auth{key: key}, ""), premiumPerMinute, reset, clk.Now())
}

// TestUnlimitedKeys checks that unlimited keys, whether asked for by an
// admin or given by the server's default tier, get no headers and no 429.
func TestUnlimitedKeys(t *testing.T) {
	const requests = standardPerMinute + 20
	expectUnlimited := func(t *testing.T, ts *testServer, key string) {
		t.Helper()
		for range requests {
			r := ts.do("GET", "/api/agents/me", auth{key: key}, "")
			ts.expect(r, http.StatusOK, "")
			if h := rateLimitOf(t, r); h.present {
				t.Fatalf("unlimited key got rate-limit headers %+v", h)
			}
		}
	}
	t.Run("asked by an admin", func(t *testing.T) {
		ts := newTestServer(t, Config{})
		adminSession, _ := ts.adminWithID()
		m := ts.postKey(adminSession, `{"name":"batch","scopes":["read"],"rate_limit_tier":"unlimited"}`)
		expectUnlimited(t, ts, jsonStr(t, m, "key"))
	})
	t.Run("server default", func(t *testing.T) {
		ts := newTestServer(t, Config{DefaultTier: core.TierUnlimited})
		user, id := ts.registerAccount("uma")
		m := ts.postKey(user, `{"name":"bot","scopes":["read"]}`)
		if got := jsonStr(t, m, "rate_limit_tier"); got != "unlimited" {
			t.Fatalf("rate_limit_tier %q under -default-tier unlimited", got)
		}
		expectUnlimited(t, ts, jsonStr(t, m, "key"))
		// The default may be asked for by name; any other tier is the
		// admin's to give, standard included.
		ts.postKey(user, `{"name":"bot","scopes":["read"],"rate_limit_tier":"unlimited"}`)
		before := ts.accessStateOf(id)
		ts.expect(ts.do("POST", "/api/keys", auth{session: user}, `{"name":"bot","scopes":["read"],"rate_limit_tier":"standard"}`),
			http.StatusForbidden, "Admin role required")
		ts.expectUnchanged(before, id)
	})
	t.Run("premium server default", func(t *testing.T) {
		ts, clk := newSteppedServer(t, Config{DefaultTier: core.TierPremium})
		user, _ := ts.registerAccount("vera")
		m := ts.postKey(user, `{"name":"bot","scopes":["read"]}`)
		if got := jsonStr(t, m, "rate_limit_tier"); got != "premium" {
			t.Fatalf("rate_limit_tier %q under -default-tier premium", got)
		}
		r := ts.do("GET", "/api/agents/me", auth{key: jsonStr(t, m, "key")}, "")
		expectRate(t, r, premiumPerMinute, premiumPerMinute-1, clk.Now().Add(time.Minute))
	})
}

// TestSessionLimitPerAccount checks that all sessions of an account share
// one window at the premium rate, apart from other accounts and from the
// account's keys, and where the 429 stands among the other checks.
func TestSessionLimitPerAccount(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	first, id := ts.registerAccount("wendy")
	key := ts.newKey(first, "read")
	lr := ts.do("POST", "/api/auth/login", auth{}, `{"name":"wendy","password":"password-wendy"}`)
	ts.expect(lr, http.StatusOK, "")
	second := sessionCookieIn(lr).Value
	other := ts.register("xena")
	reset := clk.Now().Add(time.Minute)

	// The key's creation was the window's first request.
	for i := 1; i < premiumPerMinute; i++ {
		s := first
		if i%2 == 0 {
			s = second
		}
		r := ts.do("GET", "/api/markets/active", auth{session: s}, "")
		ts.expect(r, http.StatusOK, "")
		if i >= premiumPerMinute-2 {
			expectRate(t, r, premiumPerMinute, premiumPerMinute-1-i, reset)
		}
	}
	for _, s := range []string{first, second} {
		expectLimited(t, ts, ts.do("GET", "/api/agents/me", auth{session: s}, ""), premiumPerMinute, reset, clk.Now())
	}
	r := ts.do("GET", "/api/agents/me", auth{session: other}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, premiumPerMinute, premiumPerMinute-1, reset)
	r = ts.do("GET", "/api/agents/me", auth{key: key}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, standardPerMinute, standardPerMinute-1, reset)

	// docs/API.md, "Order of checks": 403 Admin role required before 429, and
	// 429 before the request's own validation, whose 403 for an admin-scope key
	// included.
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		msg    string
	}{
		{"admin route", "POST", "/api/admin/settle", `{}`, http.StatusForbidden, "Admin role required"},
		{"admin stats", "GET", "/api/admin/stats", "", http.StatusForbidden, "Admin role required"},
		{"invalid key body", "POST", "/api/keys", `{"name":`, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"admin-scope key", "POST", "/api/keys", `{"name":"k","scopes":["admin"]}`, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"premium key", "POST", "/api/keys", `{"name":"k","scopes":["read"],"rate_limit_tier":"premium"}`, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"valid key", "POST", "/api/keys", `{"name":"k","scopes":["read"]}`, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"malformed key id", "DELETE", "/api/keys/x", "", http.StatusTooManyRequests, "Rate limit exceeded"},
		{"logout", "POST", "/api/auth/logout", "", http.StatusTooManyRequests, "Rate limit exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			ts.expect(ts.do(tc.method, tc.path, auth{session: first}, tc.body), tc.status, tc.msg)
			ts.expectUnchanged(before, id)
		})
	}

	clk.Advance(time.Minute)
	r = ts.do("GET", "/api/agents/me", auth{session: second}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, premiumPerMinute, premiumPerMinute-1, clk.Now().Add(time.Minute))
}

// TestAnonymousLimitPerIP checks the per-IP limit of requests without
// credentials on a server configured with a small one, register and login
// included, and that credentials take a request out of it.
func TestAnonymousLimitPerIP(t *testing.T) {
	const perMinute = 5
	ts, clk := newSteppedServer(t, Config{AnonRatePerMinute: perMinute})
	user, id := ts.registerAccount("yuri")
	key := ts.newKey(user, "read")
	clk.Advance(time.Minute) // a window of its own, after the registration's
	reset := clk.Now().Add(time.Minute)

	for i := range perMinute {
		r := ts.do("GET", "/api/markets/active", auth{}, "")
		ts.expect(r, http.StatusOK, "")
		expectRate(t, r, perMinute, perMinute-1-i, reset)
	}
	expectLimited(t, ts, ts.do("GET", "/api/markets", auth{}, ""), perMinute, reset, clk.Now())
	tests := []struct {
		name string
		path string
		body string
	}{
		{"register", "/api/auth/register", `{"name":"zack","password":"password-zack"}`},
		{"login", "/api/auth/login", `{"name":"yuri","password":"password-yuri"}`},
		{"invalid body", "/api/auth/register", `{"name":`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			r := ts.do("POST", tc.path, auth{}, tc.body)
			expectLimited(t, ts, r, perMinute, reset, clk.Now())
			if c := r.header.Get("Set-Cookie"); c != "" {
				t.Errorf("limited request set a cookie: %s", c)
			}
			ts.expectUnchanged(before, id)
		})
	}
	if _, ok := ts.eng.AccountByName("zack"); ok {
		t.Error("a limited registration created its account")
	}

	// Credentials are limited as their owner, not as the address.
	r := ts.do("GET", "/api/markets/active", auth{key: key}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, standardPerMinute, standardPerMinute-1, reset)
	r = ts.do("GET", "/api/markets/active", auth{session: user}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, premiumPerMinute, premiumPerMinute-1, reset)
	// Bad credentials are refused as such, not counted as anonymous.
	ts.expect(ts.do("GET", "/api/markets/active", auth{key: "svc_live_" + strings.Repeat("0", 32)}, ""),
		http.StatusUnauthorized, "Authentication required")

	clk.Advance(time.Minute)
	r = ts.do("GET", "/api/markets/active", auth{}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, perMinute, perMinute-1, clk.Now().Add(time.Minute))
}

// TestAnonymousDefaultLimit checks the default per-IP rate (flag
// -anon-rate, 600 a minute) on a server configured with none.
func TestAnonymousDefaultLimit(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	r := ts.do("GET", "/api/markets/active", auth{}, "")
	ts.expect(r, http.StatusOK, "")
	expectRate(t, r, DefaultAnonRatePerMinute, DefaultAnonRatePerMinute-1, clk.Now().Add(time.Minute))
}

// TestConcurrentKeyLimit fires one standard key from 64 goroutines at ten
// times its limit within one window (the test clock does not move):
// exactly 60 requests pass, the rest get 429, and every one is counted in
// the key's total_requests.
func TestConcurrentKeyLimit(t *testing.T) {
	const goroutines, requests = 64, 10 * standardPerMinute
	ts, _ := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("zoe")
	key := ts.newKey(user, "read")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: goroutines}}
	defer client.CloseIdleConnections()

	var next, ok, limited atomic.Int64
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= requests {
				status, err := plainStatus(client, "GET", ts.url+"/api/agents/me", auth{key: key}, "")
				switch {
				case err != nil:
					errs <- err
					return
				case status == http.StatusOK:
					ok.Add(1)
				case status == http.StatusTooManyRequests:
					limited.Add(1)
				default:
					errs <- fmt.Errorf("unexpected status %d", status)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ok.Load() != standardPerMinute || limited.Load() != requests-standardPerMinute {
		t.Fatalf("%d passed and %d got 429, want %d and %d", ok.Load(), limited.Load(), standardPerMinute, requests-standardPerMinute)
	}
	list := decodeExact(t, ts.do("GET", "/api/keys", auth{session: user}, "").body)
	if got := jsonInt(t, listedKey(t, list, mustKeyID(t, ts, key)), "total_requests"); got != requests {
		t.Errorf("total_requests %d, want %d", got, requests)
	}
}

// TestCheckOrderWithExhaustedKey sends requests that fail more than one
// check with a key whose window is exhausted: each gets the answer of the
// first check of docs/API.md, "Order of checks", and none changes anything.
func TestCheckOrderWithExhaustedKey(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, id := ts.registerAccount("alan")
	readKey := ts.newKey(user, "read")
	tradeKey := ts.newKey(user, "read", "trade")
	revoked := ts.postKey(user, `{"name":"doomed","scopes":["read","trade"]}`)
	revokedKey := jsonStr(t, revoked, "key")
	for _, k := range []string{readKey, tradeKey, revokedKey} {
		for range standardPerMinute {
			ts.expect(ts.do("GET", "/api/markets/active", auth{key: k}, ""), http.StatusOK, "")
		}
		ts.expect(ts.do("GET", "/api/markets/active", auth{key: k}, ""), http.StatusTooManyRequests, "Rate limit exceeded")
	}
	ts.expect(ts.do("DELETE", "/api/keys/"+jsonStr(t, revoked, "id"), auth{session: user}, ""), http.StatusOK, "")
	adminSession, _ := ts.adminWithID()
	mr := ts.do("POST", "/api/markets", auth{session: adminSession},
		`{"title":"Rain?","description":"d","category":"weather","closes_at":"2099-01-01T00:00:00Z"}`)
	ts.expect(mr, http.StatusCreated, "")
	validTrade := `{"market_id":"` + jsonStr(t, decodeExact(t, mr.body), "id") + `","side":"yes","shares":1}`

	tests := []struct {
		name   string
		key    string
		method string
		path   string
		body   string
		status int
		msg    string
	}{
		{"unknown path", tradeKey, "GET", "/api/nowhere", "", http.StatusNotFound, ""},
		{"wrong method", tradeKey, "PUT", "/api/agents/me", "", http.StatusMethodNotAllowed, ""},
		{"revoked key", revokedKey, "GET", "/api/agents/me", "", http.StatusUnauthorized, "Authentication required"},
		{"session-only route", tradeKey, "POST", "/api/keys", `{"name":"k","scopes":["read"]}`, http.StatusForbidden, "Session required"},
		{"missing scope", readKey, "POST", "/api/markets/trade", `{"bogus":1}`, http.StatusForbidden, "Insufficient scope"},
		{"missing admin scope", tradeKey, "POST", "/api/markets", `{}`, http.StatusForbidden, "Insufficient scope"},
		{"invalid body", tradeKey, "POST", "/api/markets/trade", `{"bogus":1}`, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"unknown market", tradeKey, "POST", "/api/markets/trade", `{"market_id":"` + uuid.NewString() + `","side":"yes","shares":1}`, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"valid trade", tradeKey, "POST", "/api/markets/trade", validTrade, http.StatusTooManyRequests, "Rate limit exceeded"},
		{"public route", readKey, "GET", "/api/markets/active", "", http.StatusTooManyRequests, "Rate limit exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			r := ts.do(tc.method, tc.path, auth{key: tc.key}, tc.body)
			ts.expect(r, tc.status, tc.msg)
			if tc.status == http.StatusTooManyRequests && retryAfterOf(t, r) < 1 {
				t.Errorf("Retry-After %d", retryAfterOf(t, r))
			}
			ts.expectUnchanged(before, id)
		})
	}
	t.Run("body too large", func(t *testing.T) {
		ts := ts.sub(t)
		before := ts.accessStateOf(id)
		r := ts.announceOversized("POST", "/api/markets/trade", auth{key: tradeKey})
		if ts.expect(r, http.StatusRequestEntityTooLarge, ""); r.errorMessage(t) == "" {
			t.Error("empty error message")
		}
		ts.expectUnchanged(before, id)
	})
	// After the window, the invalid body gets its own answer.
	clk.Advance(time.Minute)
	ts.expectNamed(ts.do("POST", "/api/markets/trade", auth{key: tradeKey}, `{"bogus":1}`), http.StatusBadRequest, "bogus")
	ts.expect(ts.do("POST", "/api/markets/trade", auth{key: tradeKey}, validTrade), http.StatusOK, "")
}

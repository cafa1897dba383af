package transport

import (
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"marketd/core/money"
	"marketd/transport/password"
)

// Tests of POST /api/auth/register, /login and /logout (docs/API.md, their
// sections) and of sessions.

// agentShape is the agent object of register, login and the profile
// (docs/API.md, "The agent object").
var agentShape = map[string]shape{
	"id": sUUID, "name": sString, "role": sString, "balance": sNumber,
	"usdc_balance": sNumber, "trading_mode": sString, "member_since": sTime,
	"wallet_address": sStringOrNull, "persona": sString, "tos_version": sStringOrNull, "tos_accepted_at": sTimeOrNull,
}

var sessionTokenRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkSessionCookie fails unless r set the session cookie of docs/API.md,
// "Authentication": session=<random 256-bit token>; HttpOnly; SameSite=Strict;
// Path=/, and a device cookie beside it. It returns the token.
func checkSessionCookie(t *testing.T, r response) string {
	t.Helper()
	raw := r.header.Values("Set-Cookie")
	if len(raw) != 2 || deviceCookieIn(r) == nil {
		t.Fatalf("Set-Cookie %q, want one session cookie and one device cookie", raw)
	}
	c := sessionCookieIn(r)
	if c == nil {
		t.Fatalf("Set-Cookie %q does not set %q", raw, sessionCookie)
	}
	if !sessionTokenRE.MatchString(c.Value) {
		t.Errorf("token %q is not 256 bits in hex", c.Value)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %q: HttpOnly %v, SameSite %v, Path %q; want HttpOnly, Strict, /", raw, c.HttpOnly, c.SameSite, c.Path)
	}
	return c.Value
}

// TestRegister checks a registration's answer, its cookie, and what it
// stored: an account with the signup bonus and a session kept by hash.
func TestRegister(t *testing.T) {
	ts, _ := newSteppedServer(t, Config{})
	before := ts.eng.Stats()

	r := ts.do("POST", "/api/auth/register", auth{}, `{"name":"Alice_01","password":"correct horse"}`)
	ts.expect(r, http.StatusCreated, "")
	token := checkSessionCookie(t, r)
	body := decodeExact(t, r.body)
	checkShape(t, "register", body, map[string]shape{"agent": sObject})
	checkShape(t, "agent", body["agent"], agentShape)
	for path, want := range map[string]string{
		"agent.name": "Alice_01", "agent.role": "speculator", "agent.trading_mode": "kp",
		"agent.member_since": apiTime(stepClockStart),
	} {
		if got := jsonStr(t, body, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if got := jsonAmount(t, body, "agent.balance"); got != money.Units(1000) {
		t.Errorf("balance %v, want the signup bonus of 1000", got)
	}

	after := ts.eng.Stats()
	if after.Accounts != before.Accounts+1 || after.ActiveSessions != before.ActiveSessions+1 {
		t.Errorf("accounts %d -> %d, sessions %d -> %d; want one more of each",
			before.Accounts, after.Accounts, before.ActiveSessions, after.ActiveSessions)
	}
	// The server keeps the token's SHA-256 only: the cookie's value is not
	// the stored form.
	me := decodeExact(t, ts.do("GET", "/api/agents/me", auth{session: token}, "").body)
	if jsonStr(t, me, "agent.id") != jsonStr(t, body, "agent.id") {
		t.Errorf("the session is of %v, registered %v", me["agent"], body["agent"])
	}
	if _, ok := ts.eng.SessionByHash(sha256Of(token)); !ok {
		t.Error("no session stored under the token's SHA-256")
	}
	var raw [32]byte
	if b, err := hex.DecodeString(token); err == nil && copy(raw[:], b) == 32 {
		if _, ok := ts.eng.SessionByHash(raw); ok {
			t.Error("the token itself is stored as a session hash")
		}
	}
	points := decodeExact(t, ts.do("GET", "/api/points", auth{session: token}, "").body)
	if item := jsonAt(t, points, "ledger").([]any); len(item) != 1 || item[0].(map[string]any)["tx_type"] != "signup_bonus" {
		t.Errorf("ledger after signup %v, want one signup_bonus", item)
	}
}

// TestRegisterNames walks the name rule: 3-32 characters of A-Za-z0-9_-,
// unique ignoring case (docs/API.md, "POST /api/auth/register").
func TestRegisterNames(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.register("Carol")
	tests := []struct {
		name  string
		input string // the JSON string literal's content
		ok    bool
		msg   string // exact message, when docs/API.md gives one
	}{
		{"shortest", "abc", true, ""},
		{"longest", strings.Repeat("x", 32), true, ""},
		{"every class", "aZ09_-", true, ""},
		{"only punctuation", "_-_", true, ""},
		{"too short", "ab", false, ""},
		{"empty", "", false, ""},
		{"too long", strings.Repeat("y", 33), false, ""},
		{"space", "a b", false, ""},
		{"dot", "a.b", false, ""},
		{"bang", "abc!", false, ""},
		{"accented letter", "abé", false, ""},
		{"three runes of six bytes", "日本語", false, ""},
		{"newline", `abc\n`, false, ""},
		{"NUL", `abc\u0000`, false, ""},
		{"taken, same case", "Carol", false, "name: already taken"},
		{"taken, lower case", "carol", false, "name: already taken"},
		{"taken, upper case", "CAROL", false, "name: already taken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.eng.Stats()
			r := ts.do("POST", "/api/auth/register", auth{}, `{"name":"`+tc.input+`","password":"password1"}`)
			if tc.ok {
				ts.expect(r, http.StatusCreated, "")
				if got := jsonStr(t, decodeExact(t, r.body), "agent.name"); got != tc.input {
					t.Errorf("name %q, registered %q", got, tc.input)
				}
				return
			}
			if tc.msg != "" {
				ts.expect(r, http.StatusBadRequest, tc.msg)
			} else {
				ts.expectNamed(r, http.StatusBadRequest, "name")
			}
			if c := r.header.Get("Set-Cookie"); c != "" {
				t.Errorf("refused registration set a cookie: %s", c)
			}
			if after := ts.eng.Stats(); after != before {
				t.Errorf("refused registration changed the totals:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// TestRegisterRace registers one name from several clients at once: one
// account is created, the others are told the name is taken.
func TestRegisterRace(t *testing.T) {
	ts := newTestServer(t, Config{})
	before := ts.eng.Stats().Accounts
	got := ts.concurrently(8, "POST", "/api/auth/register", auth{}, `{"name":"twin","password":"password1"}`)
	if want := map[int]int{http.StatusCreated: 1, http.StatusBadRequest: 7}; !maps.Equal(got, want) {
		t.Errorf("concurrent registrations answered %v, want %v", got, want)
	}
	if after := ts.eng.Stats().Accounts; after != before+1 {
		t.Errorf("accounts %d -> %d, want one more", before, after)
	}
}

// TestRegisterPasswords checks that the 8-128 bounds count characters
// (runes), not bytes, and that a password at a bound logs in.
func TestRegisterPasswords(t *testing.T) {
	ts := newTestServer(t, Config{})
	tests := []struct {
		name     string
		password string
		ok       bool
	}{
		{"8 ASCII", "abcdefgh", true},
		{"7 ASCII", "abcdefg", false},
		{"8 runes of 2 bytes", strings.Repeat("é", 8), true},
		{"7 runes of 2 bytes (14 bytes)", strings.Repeat("é", 7), false},
		{"7 runes of 4 bytes (28 bytes)", strings.Repeat("😀", 7), false},
		{"128 ASCII", strings.Repeat("p", 128), true},
		{"129 ASCII", strings.Repeat("p", 129), false},
		{"128 runes of 4 bytes (512 bytes)", strings.Repeat("😀", 128), true},
		{"129 runes of 2 bytes", strings.Repeat("é", 129), false},
		{"empty", "", false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			name := fmt.Sprintf("pw%02d", i)
			before := ts.eng.Stats()
			body := jsonOf(map[string]string{"name": name, "password": tc.password})
			r := ts.do("POST", "/api/auth/register", auth{}, body)
			if !tc.ok {
				ts.expectNamed(r, http.StatusBadRequest, "password")
				if after := ts.eng.Stats(); after != before {
					t.Errorf("refused registration changed the totals:\nbefore %+v\nafter  %+v", before, after)
				}
				return
			}
			ts.expect(r, http.StatusCreated, "")
			ts.expect(ts.do("POST", "/api/auth/login", auth{}, body), http.StatusOK, "")
		})
	}
}

// TestRegisterBodies sends bodies that strict decoding refuses: each is a
// 400 naming the field at fault (or the body, when no field is), and
// creates nothing.
func TestRegisterBodies(t *testing.T) {
	ts := newTestServer(t, Config{})
	tests := []struct {
		name  string
		body  string
		field string // "" when the body as a whole is at fault
	}{
		{"missing name", `{"password":"password1"}`, "name"},
		{"missing password", `{"name":"bob01"}`, "password"},
		{"null name", `{"name":null,"password":"password1"}`, "name"},
		{"numeric name", `{"name":12345,"password":"password1"}`, "name"},
		{"numeric password", `{"name":"bob01","password":12345678}`, "password"},
		{"array password", `{"name":"bob01","password":["password1"]}`, "password"},
		{"unknown field", `{"name":"bob01","password":"password1","role":"admin"}`, "role"},
		{"field in another case", `{"Name":"bob01","password":"password1"}`, "Name"},
		{"duplicate name", `{"name":"bob01","name":"bob02","password":"password1"}`, "name"},
		{"duplicate password", `{"name":"bob01","password":"password1","password":"password2"}`, "password"},
		{"trailing garbage", `{"name":"bob01","password":"password1"} x`, ""},
		{"two objects", `{"name":"bob01","password":"password1"}{}`, ""},
		{"empty body", ``, ""},
		{"array", `[{"name":"bob01","password":"password1"}]`, ""},
		{"form encoding", `name=bob01&password=password1`, ""},
		{"truncated", `{"name":"bob01","password":"pass`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.eng.Stats()
			r := ts.do("POST", "/api/auth/register", auth{}, tc.body)
			if tc.field != "" {
				ts.expectNamed(r, http.StatusBadRequest, tc.field)
			} else if ts.expect(r, http.StatusBadRequest, ""); r.errorMessage(t) == "" {
				t.Error("empty error message")
			}
			if after := ts.eng.Stats(); after != before {
				t.Errorf("refused registration changed the totals:\nbefore %+v\nafter  %+v", before, after)
			}
			for _, n := range []string{"bob01", "bob02"} {
				if _, ok := ts.eng.AccountByName(n); ok {
					t.Errorf("account %s exists", n)
				}
			}
		})
	}
}

// TestLogin checks a login's answer and cookie, then its refusals: the
// same 401 for a wrong name and a wrong password, so that names cannot be
// probed, and 400 naming the field for malformed bodies.
func TestLogin(t *testing.T) {
	ts := newTestServer(t, Config{})
	first, id := ts.registerAccount("dave")

	r := ts.do("POST", "/api/auth/login", auth{}, `{"name":"dave","password":"password-dave"}`)
	ts.expect(r, http.StatusOK, "")
	second := checkSessionCookie(t, r)
	body := decodeExact(t, r.body)
	checkShape(t, "login", body, map[string]shape{"agent": sObject})
	checkShape(t, "agent", body["agent"], agentShape)
	if got := jsonStr(t, body, "agent.id"); got != id.String() {
		t.Errorf("agent.id %s, want %s", got, id)
	}
	if second == first {
		t.Error("login returned the registration's session token")
	}
	for _, s := range []string{first, second} {
		ts.expect(ts.do("GET", "/api/agents/me", auth{session: s}, ""), http.StatusOK, "")
	}

	ts.register("erin")
	tests := []struct {
		name   string
		body   string
		status int
		msg    string
		field  string
	}{
		{"wrong password", `{"name":"dave","password":"password-erin"}`, http.StatusUnauthorized, "Invalid credentials", ""},
		{"unknown name", `{"name":"nobody","password":"password-dave"}`, http.StatusUnauthorized, "Invalid credentials", ""},
		{"another account's password", `{"name":"erin","password":"password-dave"}`, http.StatusUnauthorized, "Invalid credentials", ""},
		{"house account", `{"name":"house","password":"password-dave"}`, http.StatusUnauthorized, "Invalid credentials", ""},
		{"empty password", `{"name":"dave","password":""}`, http.StatusUnauthorized, "Invalid credentials", ""},
		{"missing name", `{"password":"password-dave"}`, http.StatusBadRequest, "", "name"},
		{"missing password", `{"name":"dave"}`, http.StatusBadRequest, "", "password"},
		{"numeric password", `{"name":"dave","password":1}`, http.StatusBadRequest, "", "password"},
		{"unknown field", `{"name":"dave","password":"password-dave","remember":true}`, http.StatusBadRequest, "", "remember"},
		{"duplicate name", `{"name":"erin","name":"dave","password":"password-dave"}`, http.StatusBadRequest, "", "name"},
		{"trailing garbage", `{"name":"dave","password":"password-dave"}]`, http.StatusBadRequest, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			r := ts.do("POST", "/api/auth/login", auth{}, tc.body)
			if tc.field != "" {
				ts.expectNamed(r, tc.status, tc.field)
			} else {
				ts.expect(r, tc.status, tc.msg)
			}
			if c := r.header.Get("Set-Cookie"); c != "" {
				t.Errorf("refused login set a cookie: %s", c)
			}
			ts.expectUnchanged(before, id)
		})
	}
	// Fewer than 5 failures per name above: the guard did not block dave.
	ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"dave","password":"password-dave"}`), http.StatusOK, "")
}

// TestLoginGuard checks that 5 failed logins for a name block it for a
// minute with 429 and Retry-After, whatever the spelling's case and even
// with the right password, and that the block ends with the minute.
func TestLoginGuard(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	_, id := ts.registerAccount("frank")
	ts.register("grace")
	const wrong = `{"name":"frank","password":"not-the-password"}`
	const right = `{"name":"frank","password":"password-frank"}`
	for range password.DefaultLockoutLimits.PerClient {
		ts.expect(ts.do("POST", "/api/auth/login", auth{}, wrong), http.StatusUnauthorized, "Invalid credentials")
	}
	before := ts.accessStateOf(id)
	for _, body := range []string{right, wrong, `{"name":"FRANK","password":"password-frank"}`} {
		r := ts.do("POST", "/api/auth/login", auth{}, body)
		ts.expect(r, http.StatusTooManyRequests, "")
		if r.errorMessage(t) == "" {
			t.Error("empty error message")
		}
		if got := retryAfterOf(t, r); got != 60 {
			t.Errorf("Retry-After %d, want 60 (the block began at this instant)", got)
		}
		if c := r.header.Get("Set-Cookie"); c != "" {
			t.Errorf("blocked login set a cookie: %s", c)
		}
	}
	ts.expectUnchanged(before, id)
	// Other names are not blocked, nor is an existing session.
	ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"grace","password":"password-grace"}`), http.StatusOK, "")

	clk.Advance(30*time.Second + 500*time.Millisecond)
	r := ts.do("POST", "/api/auth/login", auth{}, right)
	ts.expect(r, http.StatusTooManyRequests, "")
	if got := retryAfterOf(t, r); got != 30 {
		t.Errorf("Retry-After %d after 30.5 s, want 30 (29.5 s rounded up)", got)
	}
	clk.Advance(29*time.Second + 500*time.Millisecond)
	r = ts.do("POST", "/api/auth/login", auth{}, right)
	ts.expect(r, http.StatusOK, "")
	checkSessionCookie(t, r)

	// Unknown names are counted too, so that probing for names costs the
	// same as guessing passwords.
	for range password.DefaultLockoutLimits.PerClient {
		ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"ghost","password":"password1"}`),
			http.StatusUnauthorized, "Invalid credentials")
	}
	ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"ghost","password":"password1"}`),
		http.StatusTooManyRequests, "")
}

// TestLogout checks that logout revokes only the calling session, at once
// and server-side, refuses API keys, and that sessions end after 7 days.
func TestLogout(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	first, id := ts.registerAccount("heidi")
	r := ts.do("POST", "/api/auth/login", auth{}, `{"name":"heidi","password":"password-heidi"}`)
	ts.expect(r, http.StatusOK, "")
	second := checkSessionCookie(t, r)
	key := ts.newKey(first, "read", "trade")

	refusals := []struct {
		name   string
		a      auth
		status int
		msg    string
	}{
		{"API key", auth{key: key}, http.StatusForbidden, "Session required"},
		{"no credentials", auth{}, http.StatusUnauthorized, "Authentication required"},
		{"unknown session", auth{session: strings.Repeat("ab", 32)}, http.StatusUnauthorized, "Authentication required"},
		{"malformed session", auth{session: "x"}, http.StatusUnauthorized, "Authentication required"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			ts.expect(ts.do("POST", "/api/auth/logout", tc.a, ""), tc.status, tc.msg)
			ts.expectUnchanged(before, id)
		})
	}

	sessions := ts.eng.Stats().ActiveSessions
	r = ts.do("POST", "/api/auth/logout", auth{session: first}, "")
	ts.expect(r, http.StatusOK, "")
	decodeExact(t, r.body)
	// The browser's copy is expired too, at the cookie's Path: a deletion
	// at another path leaves it in place (TestBrowserSessionFlow).
	if c := sessionCookieIn(r); c == nil || c.Value != "" || c.Path != "/" ||
		!(c.MaxAge < 0 || !c.Expires.IsZero() && c.Expires.Before(clk.Now())) {
		t.Errorf("logout does not expire the cookie at Path=/: %q", r.header.Values("Set-Cookie"))
	}
	if got := ts.eng.Stats().ActiveSessions; got != sessions-1 {
		t.Errorf("active sessions %d after logout, want %d", got, sessions-1)
	}
	// Revoked server-side at once: the token no longer works anywhere.
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: first}, ""), http.StatusUnauthorized, "Authentication required")
	ts.expect(ts.do("POST", "/api/auth/logout", auth{session: first}, ""), http.StatusUnauthorized, "Authentication required")
	// On a public route a dead session cookie is ignored, so that a
	// browser still sending it can log in again (docs/API.md).
	ts.expect(ts.do("GET", "/api/markets/active", auth{session: first}, ""), http.StatusOK, "")
	ts.expect(ts.do("POST", "/api/auth/login", auth{session: first}, `{"name":"nobody","password":"whatever1"}`),
		http.StatusUnauthorized, "Invalid credentials")
	// Other sessions and the keys of the account live on.
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: second}, ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")

	// Sessions expire after 7 days (docs/API.md, "Authentication").
	clk.Advance(DefaultSessionTTL - time.Second)
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: second}, ""), http.StatusOK, "")
	clk.Advance(time.Second)
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: second}, ""), http.StatusUnauthorized, "Authentication required")
}

// TestBrowserSessionFlow runs register, logout and login again through a
// cookie jar, as a browser keeps the cookie: logout must drop the browser's
// cookie, since a revoked token that is still sent gets 401 on every route,
// login included, and would lock the user out until the cookie is cleared
// by hand.
func TestBrowserSessionFlow(t *testing.T) {
	ts := newTestServer(t, Config{})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	base, err := url.Parse(ts.url)
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	jarSession := func() string {
		for _, c := range jar.Cookies(base) {
			if c.Name == sessionCookie {
				return c.Value
			}
		}
		return ""
	}
	steps := []struct {
		name    string
		method  string
		path    string
		body    string
		status  int
		session bool // whether the jar holds a session cookie after the step
	}{
		{"register", "POST", "/api/auth/register", `{"name":"ursula","password":"password-ursula"}`, http.StatusCreated, true},
		{"profile", "GET", "/api/agents/me", "", http.StatusOK, true},
		{"logout", "POST", "/api/auth/logout", "", http.StatusOK, false},
		{"profile after logout", "GET", "/api/agents/me", "", http.StatusUnauthorized, false},
		{"login again", "POST", "/api/auth/login", `{"name":"ursula","password":"password-ursula"}`, http.StatusOK, true},
		{"profile after login", "GET", "/api/agents/me", "", http.StatusOK, true},
	}
	for _, st := range steps {
		if got := send(st.method, st.path, st.body); got != st.status {
			t.Fatalf("%s: status %d, want %d (jar holds %q)", st.name, got, st.status, jarSession())
		}
		if got := jarSession() != ""; got != st.session {
			t.Fatalf("%s: the browser holds a session cookie: %v, want %v", st.name, got, st.session)
		}
	}
}

// TestValidKeyLiteral: a key is svc_live_ and exactly 32 lowercase hex
// digits; every other byte in any digit's place, a missing or extra digit
// and another prefix are refused.
func TestValidKeyLiteral(t *testing.T) {
	valid := "svc_live_0123456789abcdef0123456789abcdef"
	if !validKeyLiteral([]byte(valid)) {
		t.Fatalf("%q refused", valid)
	}
	for i := len(keyLiteralPrefix); i < len(valid); i++ {
		for c := range 256 {
			k := []byte(valid)
			k[i] = byte(c)
			want := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
			if got := validKeyLiteral(k); got != want {
				t.Fatalf("%q: valid %v, want %v", k, got, want)
			}
		}
	}
	for _, k := range []string{valid[:len(valid)-1], valid + "0", "svc_test_0123456789abcdef0123456789abcdef", ""} {
		if validKeyLiteral([]byte(k)) {
			t.Errorf("%q accepted", k)
		}
	}
}

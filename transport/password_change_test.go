package transport

import (
	"context"
	"net/http"
	"testing"

	"marketd/transport/password"
)

// TestChangePassword: POST /api/auth/password changes the password of the
// session's account and ends its other sessions (not its keys); the old
// password no longer logs in, the new one does. It failed before: the
// route did not exist (404).
func TestChangePassword(t *testing.T) {
	ts, _ := newClockServer(t, Config{}, nil)
	first, id := ts.registerAccount("rita")
	second := ts.login("rita", "password-rita")
	key := ts.newKey(first, "read")
	other := ts.register("sam")

	refusals := []struct {
		name   string
		a      auth
		body   string
		status int
		field  string
		msg    string
	}{
		{"API key", auth{key: key}, `{"old_password":"password-rita","new_password":"new-password-1"}`, http.StatusForbidden, "", "Session required"},
		{"no credentials", auth{}, `{"old_password":"password-rita","new_password":"new-password-1"}`, http.StatusUnauthorized, "", "Authentication required"},
		{"missing old", auth{session: first}, `{"new_password":"new-password-1"}`, http.StatusBadRequest, "old_password", ""},
		{"missing new", auth{session: first}, `{"old_password":"password-rita"}`, http.StatusBadRequest, "new_password", ""},
		{"short new", auth{session: first}, `{"old_password":"password-rita","new_password":"short"}`, http.StatusBadRequest, "new_password", ""},
		{"same as old", auth{session: first}, `{"old_password":"password-rita","new_password":"password-rita"}`, http.StatusBadRequest, "new_password", ""},
		{"wrong old", auth{session: first}, `{"old_password":"not-rita-pw","new_password":"new-password-1"}`, http.StatusBadRequest, "old_password", ""},
		{"unknown field", auth{session: first}, `{"old_password":"password-rita","new_password":"new-password-1","x":1}`, http.StatusBadRequest, "x", ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			r := ts.do("POST", "/api/auth/password", tc.a, tc.body)
			if tc.field != "" {
				ts.expectNamed(r, tc.status, tc.field)
			} else {
				ts.expect(r, tc.status, tc.msg)
			}
			ts.expectUnchanged(before, id)
		})
	}

	r := ts.do("POST", "/api/auth/password", auth{session: first}, `{"old_password":"password-rita","new_password":"new-password-1"}`)
	ts.expect(r, http.StatusOK, "")
	if got := r.json(t)["status"]; got != "password_changed" {
		t.Errorf("status %v", got)
	}
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: first}, ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: second}, ""), http.StatusUnauthorized, "Authentication required")
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: other}, ""), http.StatusOK, "")
	ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"rita","password":"password-rita"}`), http.StatusUnauthorized, "Invalid credentials")
	ts.login("rita", "new-password-1")

	// Wrong old passwords are counted per session, and then refused.
	for range password.DefaultLockoutLimits.PerDevice {
		ts.expectNamed(ts.do("POST", "/api/auth/password", auth{session: first}, `{"old_password":"wrong-pw-1","new_password":"new-password-2"}`), http.StatusBadRequest, "old_password")
	}
	ts.expect(ts.do("POST", "/api/auth/password", auth{session: first}, `{"old_password":"new-password-1","new_password":"new-password-2"}`), http.StatusTooManyRequests, "Rate limit exceeded")
}

// TestResetPassword: the operator's reset sets the password and ends every
// session of the account.
func TestResetPassword(t *testing.T) {
	ts, _ := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	if err := ts.srv.ResetPassword(context.Background(), "admin", "fresh-admin-pw"); err != nil {
		t.Fatal(err)
	}
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: adm}, ""), http.StatusUnauthorized, "Authentication required")
	ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"admin","password":"admin-password"}`), http.StatusUnauthorized, "Invalid credentials")
	ts.login("admin", "fresh-admin-pw")
	if err := ts.srv.ResetPassword(context.Background(), "nobody", "fresh-admin-pw"); err == nil {
		t.Error("reset of an unknown account succeeded")
	}
	if err := ts.srv.ResetPassword(context.Background(), "admin", "short"); err == nil {
		t.Error("reset to a short password succeeded")
	}
}

// login logs name in and returns the session token.
func (ts *testServer) login(name, pw string) string {
	ts.t.Helper()
	r := ts.do("POST", "/api/auth/login", auth{}, `{"name":"`+name+`","password":"`+pw+`"}`)
	ts.expect(r, http.StatusOK, "")
	c := sessionCookieIn(r)
	if c == nil {
		ts.t.Fatalf("login %s: no session cookie", name)
	}
	return c.Value
}

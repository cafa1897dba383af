package transport

import (
	"net/http"
	"testing"

	"marketd/transport/password"
)

// TestLoginNameWithNUL: a name is the account's name only as spelled
// (ignoring case); a name with NUL bytes after it is an unknown name, so
// that it neither logs in as the account nor escapes the account's
// lockout.
func TestLoginNameWithNUL(t *testing.T) {
	ts, _ := newSteppedServer(t, Config{})
	ts.register("frank")
	const wrong = `{"name":"frank","password":"not-the-password"}`
	for range password.DefaultLockoutLimits.PerClient {
		ts.expect(ts.do("POST", "/api/auth/login", auth{}, wrong), http.StatusUnauthorized, "Invalid credentials")
	}
	ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"frank","password":"password-frank"}`), http.StatusTooManyRequests, "")
	r := ts.do("POST", "/api/auth/login", auth{}, `{"name":"frank\u0000","password":"password-frank"}`)
	ts.expect(r, http.StatusUnauthorized, "Invalid credentials")
}

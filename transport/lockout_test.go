package transport

import (
	"bytes"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"marketd/transport/password"
)

// Tests of the login lockout with device cookies, the per-client password
// checks and the hashing reserve (docs/API.md, "Failed logins and password
// hashing").

// deviceCookieIn returns the device cookie r sets, or nil.
func deviceCookieIn(r response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == deviceCookie {
			return c
		}
	}
	return nil
}

// client is a test client at one address, given to the server through
// X-Forwarded-For (the server trusts 127.0.0.1 as a proxy), holding the
// cookies a browser would keep.
type client struct {
	addr    string
	device  string // the device cookie's value, "" for none
	session string
}

// doAs sends a request as c, with extra cookies and headers of a browser
// at c's address.
func (ts *testServer) doAs(c *client, method, path, body string) response {
	ts.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if c.addr != "" {
		req.Header.Set(headerForwardedFor, c.addr)
	}
	if c.device != "" {
		req.AddCookie(&http.Cookie{Name: deviceCookie, Value: c.device})
	}
	if c.session != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: c.session})
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: bytes.TrimSpace(b)}
}

// login logs c in with password, keeping the cookies it gets.
func (ts *testServer) loginAs(c *client, name, pw string) response {
	ts.t.Helper()
	r := ts.doAs(c, "POST", "/api/auth/login", `{"name":"`+name+`","password":"`+pw+`"}`)
	if r.status == http.StatusOK {
		if d := deviceCookieIn(r); d != nil {
			c.device = d.Value
		}
		if s := sessionCookieIn(r); s != nil {
			c.session = s.Value
		}
	}
	return r
}

var loopbackProxy = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// TestLockoutSparesDeviceCookie: failed logins from others cannot stop an
// owner who knows the password on a device it logged in from before,
// while guesses at the name from every other client stay bounded. It
// failed before device cookies: after five failures from anyone, the
// admin's right password got 429.
func TestLockoutSparesDeviceCookie(t *testing.T) {
	limits := password.DefaultLockoutLimits
	ts, clk := newClockServer(t, Config{TrustedProxies: loopbackProxy, Lockout: limits}, nil)
	ts.admin()
	owner := &client{addr: "198.51.100.7"}
	ts.expect(ts.loginAs(owner, "admin", "admin-password"), http.StatusOK, "")
	if owner.device == "" {
		t.Fatal("login set no device cookie")
	}
	firstDevice := owner.device

	// Attackers at many addresses guess until every one of them is
	// refused. Each address is blocked after PerClient failures, and
	// all of them together after PerName.
	guesses := 0
	for i := range 40 {
		attacker := &client{addr: netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String()}
		for range limits.PerClient + 1 {
			r := ts.loginAs(attacker, "admin", "wrong-password")
			switch r.status {
			case http.StatusUnauthorized:
				guesses++
			case http.StatusTooManyRequests:
			default:
				t.Fatalf("attacker got %d: %s", r.status, r.body)
			}
		}
	}
	if guesses != limits.PerName {
		t.Errorf("%d guesses checked from 40 addresses, want the global bound %d", guesses, limits.PerName)
	}

	// The owner's device logs in, with its own address or any other.
	ts.expect(ts.loginAs(owner, "admin", "admin-password"), http.StatusOK, "")
	owner.addr = "203.0.113.1" // an address the attackers used
	ts.expect(ts.loginAs(owner, "admin", "admin-password"), http.StatusOK, "")
	// A browser without the cookie, the owner's or not, is refused like
	// the attackers until the name's block ends.
	ts.expect(ts.loginAs(&client{addr: "198.51.100.8"}, "admin", "admin-password"), http.StatusTooManyRequests, "")
	// A device cookie of another account, or a forged one, does not exempt.
	ts.register("mallory")
	mallory := &client{addr: "203.0.113.200"}
	ts.expect(ts.loginAs(mallory, "mallory", "password-mallory"), http.StatusOK, "")
	withOther := &client{addr: "198.51.100.9", device: mallory.device}
	ts.expect(ts.loginAs(withOther, "admin", "admin-password"), http.StatusTooManyRequests, "")
	forged := &client{addr: "198.51.100.9", device: owner.device[:len(owner.device)-2] + "AA"}
	ts.expect(ts.loginAs(forged, "admin", "admin-password"), http.StatusTooManyRequests, "")

	// The device cookie has its own failure limit, which does not touch
	// the name's.
	thief := &client{addr: "203.0.113.250", device: firstDevice}
	for range limits.PerDevice {
		ts.expect(ts.loginAs(thief, "admin", "wrong-password"), http.StatusUnauthorized, "Invalid credentials")
	}
	ts.expect(ts.loginAs(thief, "admin", "admin-password"), http.StatusTooManyRequests, "")
	// The owner's newer cookie (each login issues one) is another device.
	ts.expect(ts.loginAs(owner, "admin", "admin-password"), http.StatusOK, "")

	// Once the name's block has ended, a browser without a cookie may try
	// again.
	clk.Advance(limits.PerNameBlock)
	ts.expect(ts.loginAs(&client{addr: "198.51.100.8"}, "admin", "admin-password"), http.StatusOK, "")
}

// TestDeviceCookieSurvivesRestart: a device cookie is signed with the
// configured key (kept in the data directory by cmd/marketd), so a server
// with the same key honours it, and one with another key does not.
func TestDeviceCookieSurvivesRestart(t *testing.T) {
	key := bytes.Repeat([]byte{7}, DeviceKeyBytes)
	a := &deviceSigner{key: key}
	b := &deviceSigner{key: bytes.Repeat([]byte{7}, DeviceKeyBytes)}
	other := &deviceSigner{key: bytes.Repeat([]byte{8}, DeviceKeyBytes)}
	acct := [16]byte{1, 2, 3}
	now := time.Unix(1_800_000_000, 0)
	v := a.issue(acct, now)
	if _, ok := b.verify([]byte(v), acct, now.Add(time.Hour)); !ok {
		t.Error("the same key does not verify its cookie")
	}
	for name, tc := range map[string]struct {
		s     *deviceSigner
		value string
		acct  [16]byte
		at    time.Time
	}{
		"other key":     {other, v, acct, now},
		"other account": {b, v, [16]byte{9}, now},
		"expired":       {b, v, acct, now.Add(deviceCookieTTL + time.Second)},
		"truncated":     {b, v[:len(v)-1], acct, now},
		"no signature":  {b, v[:strings.IndexByte(v, '.')], acct, now},
		"empty":         {b, "", acct, now},
		"garbage":       {b, "a.b.c", acct, now},
	} {
		if _, ok := tc.s.verify([]byte(tc.value), tc.acct, tc.at); ok {
			t.Errorf("%s: verified", name)
		}
	}
}

// TestPasswordChecksPerClient: one client address gets at most
// PasswordChecksPerMinute password checks a minute (login and register),
// refused before the hashing pool with 429; other addresses and logins
// with a device cookie are not counted against it. It failed before: no
// per-client bound, every check queued for the pool.
func TestPasswordChecksPerClient(t *testing.T) {
	const perMinute = 4
	ts, clk := newClockServer(t, Config{TrustedProxies: loopbackProxy, PasswordChecksPerMinute: perMinute}, nil)
	ts.register("olive")
	owner := &client{addr: "198.51.100.1"}
	ts.expect(ts.loginAs(owner, "olive", "password-olive"), http.StatusOK, "")
	flood := &client{addr: "198.51.100.1"}
	for i := range perMinute - 1 { // the owner's login counted once
		r := ts.doAs(flood, "POST", "/api/auth/register", `{"name":"flood`+string(rune('a'+i))+`","password":"password-x"}`)
		ts.expect(r, http.StatusCreated, "")
	}
	r := ts.loginAs(flood, "nobody", "password-x")
	ts.expect(r, http.StatusTooManyRequests, "Too many password attempts from this client, retry later")
	if got := retryAfterOf(t, r); got < 1 || got > 60 {
		t.Errorf("Retry-After %d, want 1-60", got)
	}
	r = ts.doAs(flood, "POST", "/api/auth/register", `{"name":"floodz","password":"password-x"}`)
	ts.expect(r, http.StatusTooManyRequests, "Too many password attempts from this client, retry later")
	// The device cookie's logins are counted by the cookie.
	ts.expect(ts.loginAs(owner, "olive", "password-olive"), http.StatusOK, "")
	ts.expect(ts.loginAs(&client{addr: "198.51.100.2"}, "olive", "password-olive"), http.StatusOK, "")
	clk.Advance(time.Minute)
	ts.expect(ts.loginAs(flood, "olive", "password-olive"), http.StatusOK, "")
}

// TestDeviceLoginSurvivesFullTable: when a flood of fresh addresses fills
// the table of password checks per address (503 for new addresses), a
// login with a device cookie, counted in a table of its own, still goes
// through.
func TestDeviceLoginSurvivesFullTable(t *testing.T) {
	// Four windows a shard (see TestLimitTablesApart).
	ts, _ := newClockServer(t, Config{TrustedProxies: loopbackProxy, ClientsPerTable: 256, PasswordChecksPerMinute: 100}, nil)
	ts.register("uma")
	owner := &client{addr: "198.51.100.5"}
	ts.expect(ts.loginAs(owner, "uma", "password-uma"), http.StatusOK, "")
	full := false
	for i := 0; i < 10_000 && !full; i++ {
		addr := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 8), byte(i), 15: 1})
		// A name of its own each, so that no name's failures block first.
		r := ts.loginAs(&client{addr: addr.String()}, "nobody"+strconv.Itoa(i), "password-x")
		switch r.status {
		case http.StatusUnauthorized:
		case http.StatusServiceUnavailable:
			full = true
		default:
			t.Fatalf("flood: %d %s", r.status, r.body)
		}
	}
	if !full {
		t.Fatal("10,000 addresses did not fill a table of 256")
	}
	ts.expect(ts.loginAs(owner, "uma", "password-uma"), http.StatusOK, "")
}

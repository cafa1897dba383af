package transport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"marketd/core"
)

// Tests of the per-client and per-account limits other than logins
// (docs/API.md, "Rate limits").

// TestRegistrationsPerAddress: sign-ups are limited per client address an
// hour, IPv6 clients per /64. It failed before: no limit.
func TestRegistrationsPerAddress(t *testing.T) {
	const perHour = 3
	ts, clk := newClockServer(t, Config{TrustedProxies: loopbackProxy, RegistrationsPerHour: perHour}, nil)
	n := 0
	register := func(addr string) response {
		n++
		return ts.doAs(&client{addr: addr}, "POST", "/api/auth/register", fmt.Sprintf(`{"name":"user%d","password":"password-x"}`, n))
	}
	for _, tc := range []struct {
		addr   string
		status int
	}{
		{"198.51.100.1", http.StatusCreated},
		{"198.51.100.1", http.StatusCreated},
		{"198.51.100.1", http.StatusCreated},
		{"198.51.100.1", http.StatusTooManyRequests},
		{"198.51.100.2", http.StatusCreated},
		{"2001:db8:1:2::1", http.StatusCreated},
		{"2001:db8:1:2::2", http.StatusCreated},
		{"2001:db8:1:2:ffff::3", http.StatusCreated},
		{"2001:db8:1:2:aaaa::4", http.StatusTooManyRequests}, // same /64
		{"2001:db8:1:3::1", http.StatusCreated},              // next /64
	} {
		r := register(tc.addr)
		if r.status != tc.status {
			t.Fatalf("register from %s: %d %s, want %d", tc.addr, r.status, r.body, tc.status)
		}
		if r.status == http.StatusTooManyRequests {
			if msg := r.errorMessage(t); msg != "Too many registrations from this address, retry later" {
				t.Errorf("message %q", msg)
			}
			if got := retryAfterOf(t, r); got != 3600 {
				t.Errorf("Retry-After %d, want 3600", got)
			}
		}
	}
	clk.Advance(time.Hour)
	ts.expect(register("198.51.100.1"), http.StatusCreated, "")
	ts.expect(register("2001:db8:1:2::9"), http.StatusCreated, "")
}

// TestKeyChangesPerAccount: key creations and rotations together are
// limited per account an hour. It failed before: no limit.
func TestKeyChangesPerAccount(t *testing.T) {
	const perHour = 4
	ts, clk := newClockServer(t, Config{KeyChangesPerHour: perHour}, nil)
	user := ts.register("kate")
	other := ts.register("liam")
	create := func(session string) response {
		return ts.do("POST", "/api/keys", auth{session: session}, `{"name":"k","scopes":["read"]}`)
	}
	first := create(user)
	ts.expect(first, http.StatusCreated, "")
	id := first.json(t)["id"].(string)
	ts.expect(create(user), http.StatusCreated, "")
	r := ts.do("POST", "/api/keys/"+id+"/rotate", auth{session: user}, "")
	ts.expect(r, http.StatusCreated, "")
	id = r.json(t)["id"].(string)
	ts.expect(create(user), http.StatusCreated, "")
	r = ts.do("POST", "/api/keys/"+id+"/rotate", auth{session: user}, "")
	ts.expect(r, http.StatusTooManyRequests, "Too many key creations and rotations, retry later")
	ts.expect(create(user), http.StatusTooManyRequests, "Too many key creations and rotations, retry later")
	ts.expect(create(other), http.StatusCreated, "")
	clk.Advance(time.Hour)
	ts.expect(create(user), http.StatusCreated, "")
}

// TestRotatedKeyKeepsWindow: a rotated key inherits the window of the key
// it replaces, so rotating cannot multiply the per-key limit. It failed
// before: the new key had a fresh window of 60.
func TestRotatedKeyKeepsWindow(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	user := ts.register("mona")
	r := ts.do("POST", "/api/keys", auth{session: user}, `{"name":"k","scopes":["read"]}`)
	ts.expect(r, http.StatusCreated, "")
	key, id := r.json(t)["key"].(string), r.json(t)["id"].(string)
	for range standardPerMinute - 1 {
		ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")
	}
	clk.Advance(10 * time.Second)
	r = ts.do("POST", "/api/keys/"+id+"/rotate", auth{session: user}, "")
	ts.expect(r, http.StatusCreated, "")
	key = r.json(t)["key"].(string)
	r = ts.do("GET", "/api/agents/me", auth{key: key}, "")
	ts.expect(r, http.StatusOK, "")
	if got := r.header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("rotated key: X-RateLimit-Remaining %s, want 0 (the old key's window)", got)
	}
	r = ts.do("GET", "/api/agents/me", auth{key: key}, "")
	ts.expect(r, http.StatusTooManyRequests, "Rate limit exceeded")
	if got := retryAfterOf(t, r); got != 50 {
		t.Errorf("Retry-After %d, want 50 (the old window's end)", got)
	}
	clk.Advance(50 * time.Second)
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")
}

// TestLimitTablesApart: anonymous IPv6, anonymous IPv4, key and session
// clients have tables of their own, so that a flood of fresh IPv6 /64s
// that fills its table refuses (503) only new IPv6 clients. It failed
// before, with the one shared table shrunk to the same size: every new
// client got 503.
func TestLimitTablesApart(t *testing.T) {
	// 256 windows are four a shard: the flood fills one, while the test's
	// few other clients, at most two a table, can never fill theirs.
	ts, _ := newClockServer(t, Config{TrustedProxies: loopbackProxy, ClientsPerTable: 256}, nil)
	user := ts.register("nina")
	key := ts.newKey(user, "read")
	full := false
	for i := 0; i < 10_000 && !full; i++ {
		addr := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 8), byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
		r := ts.doAs(&client{addr: addr.String()}, "GET", "/api/markets", "")
		switch r.status {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			full = true
		default:
			t.Fatalf("flood: %d %s", r.status, r.body)
		}
	}
	if !full {
		t.Fatal("10,000 IPv6 /64s did not fill a table of 256")
	}
	ts.expect(ts.doAs(&client{addr: "198.51.100.77"}, "GET", "/api/markets", ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: user}, ""), http.StatusOK, "")
	second := ts.register("oscar")
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: ts.newKey(second, "read")}, ""), http.StatusOK, "")
}

// TestClientAddr: X-Forwarded-For names the client only when the peer is
// a trusted proxy, and then its right-most entry that is not one.
func TestClientAddr(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1 ,2001:db8:ffff::/48")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: Config{TrustedProxies: trusted}}
	none := &Server{}
	tests := []struct {
		name string
		srv  *Server
		peer string
		xff  []string
		want string
	}{
		{"no proxies configured", none, "10.1.1.1", []string{"203.0.113.9"}, "10.1.1.1"},
		{"untrusted peer", s, "198.51.100.1", []string{"203.0.113.9"}, "198.51.100.1"},
		{"trusted peer, one hop", s, "10.1.1.1", []string{"203.0.113.9"}, "203.0.113.9"},
		{"spoofed left entries ignored", s, "10.1.1.1", []string{"1.2.3.4, 203.0.113.9"}, "203.0.113.9"},
		{"chain of proxies", s, "10.1.1.1", []string{"203.0.113.9, 192.0.2.1, 10.2.2.2"}, "203.0.113.9"},
		{"several headers", s, "10.1.1.1", []string{"1.2.3.4, 203.0.113.9", "10.3.3.3"}, "203.0.113.9"},
		{"IPv6 client", s, "2001:db8:ffff::1", []string{"2001:db8:1::5"}, "2001:db8:1::5"},
		{"malformed entry stops", s, "10.1.1.1", []string{"203.0.113.9, junk, 10.2.2.2"}, "10.2.2.2"},
		{"no header", s, "10.1.1.1", nil, "10.1.1.1"},
		{"only proxies", s, "10.1.1.1", []string{"10.2.2.2"}, "10.2.2.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req fasthttp.Request
			for _, v := range tt.xff {
				req.Header.Add(headerForwardedFor, v)
			}
			var ctx fasthttp.RequestCtx
			ip := net.ParseIP(tt.peer)
			ctx.Init(&req, &net.TCPAddr{IP: ip, Port: 1234}, nil)
			if got := tt.srv.clientAddr(&ctx); got.String() != tt.want {
				t.Errorf("clientAddr = %s, want %s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"10.0.0.0/33", "nonsense", "1.2.3.4/x"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}

// TestKeyFloodSparesOthers: a flood of fresh API keys that fills the key
// table refuses (503) only new keys: sessions and anonymous clients keep
// being served. It failed before, with the one shared table shrunk to the
// same size: the new session got 503.
func TestKeyFloodSparesOthers(t *testing.T) {
	// Four windows a shard (see TestLimitTablesApart).
	ts, _ := newClockServer(t, Config{ClientsPerTable: 256}, nil)
	// The keys are made through the engine, so that the only requests
	// counted are the keys' own: sessions would fill their own table.
	full := false
	for a := 0; a < 100 && !full; a++ {
		_, acct := ts.registerAccount(fmt.Sprintf("flood%d", a))
		for range 10 {
			key, hash, prefix := newKeyLiteral()
			if _, err := ts.eng.CreateKey(context.Background(), core.NewKey{Account: acct, Name: "k", Hash: hash,
				Prefix: prefix, Scopes: core.ScopeRead}); err != nil {
				t.Fatal(err)
			}
			r := ts.do("GET", "/api/agents/me", auth{key: key}, "")
			if r.status == http.StatusServiceUnavailable {
				full = true
				break
			}
			ts.expect(r, http.StatusOK, "")
		}
	}
	if !full {
		t.Fatal("1,000 keys did not fill a table of 256")
	}
	fresh := ts.register("fresh")
	ts.expect(ts.do("GET", "/api/agents/me", auth{session: fresh}, ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/markets", auth{}, ""), http.StatusOK, "")
}

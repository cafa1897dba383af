package transport

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

// TestRequestID holds docs/API.md's "Request ids": a valid incoming id is
// echoed, anything else is replaced by a generated one, on every kind of
// answer (success, 404, 405, 413, a recovered panic).
func TestRequestID(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts := startTestServer(t, Config{MaxBodyBytes: 1024, Metrics: reg, ServeMetrics: reg}, nil, func(s *Server) {
		s.router.GET("/test/panic", func(*fasthttp.RequestCtx) { panic("test panic: boom") })
	})
	long := strings.Repeat("a", MaxRequestIDBytes)
	cases := []struct {
		name, method, path, body, in string
		status                       int
		keep                         bool
	}{
		{"success, none given", "GET", "/api/markets/active", "", "", 200, false},
		{"success, kept", "GET", "/api/markets/active", "", "bot-7:order/42", 200, true},
		{"longest kept", "GET", "/api/markets/active", "", long, 200, true},
		{"too long replaced", "GET", "/api/markets/active", "", long + "a", 200, false},
		{"tab replaced", "GET", "/api/markets/active", "", "a\tb", 200, false},
		{"non-ASCII replaced", "GET", "/api/markets/active", "", "caf\xc3\xa9", 200, false},
		{"404 kept", "GET", "/api/nowhere", "", "lost-1", 404, true},
		{"405 kept", "DELETE", "/api/markets/active", "", "wrong-1", 405, true},
		{"413 kept", "POST", "/api/auth/login", strings.Repeat("x", 2048), "big-1", 413, true},
		{"metrics kept", "GET", "/metrics", "", "scrape-1", 200, true},
		{"health generated", "GET", "/healthz", "", "", 200, false},
		{"panic kept", "GET", "/test/panic", "", "boom-1", 500, true},
		{"panic generated", "GET", "/test/panic", "", "", 500, false},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rd io.Reader
			if c.body != "" {
				rd = strings.NewReader(c.body)
			}
			req, err := http.NewRequest(c.method, ts.url+c.path, rd)
			if err != nil {
				t.Fatal(err)
			}
			if c.in != "" {
				req.Header[HeaderRequestID] = []string{c.in}
			}
			resp, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			got := resp.Header.Get(HeaderRequestID)
			if c.keep {
				if got != c.in {
					t.Fatalf("X-Request-Id %q, want the incoming %q", got, c.in)
				}
				return
			}
			if !validRequestID([]byte(got)) || got == c.in {
				t.Fatalf("X-Request-Id %q: want a generated id (incoming %q)", got, c.in)
			}
			if seen[got] {
				t.Fatalf("generated id %q answered twice", got)
			}
			seen[got] = true
		})
	}
}

// BenchmarkRequestIDGenerate measures what a generated id costs a request.
func BenchmarkRequestIDGenerate(b *testing.B) {
	g := newRequestIDs()
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		g.set(&ctx)
	}
}

// TestHeaderNamesAnyCase: the headers read by their canonical names
// (Authorization, Idempotency-Key, X-Request-Id) are found whatever the
// case the client wrote them in (RFC 9110, section 5.1), as fasthttp
// normalizes names while it parses a request.
func TestHeaderNamesAnyCase(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, _ := ts.registerAccount("bot")
	key := ts.newKey(sess, "trade")
	mkt := ts.createMarket(ts.admin(), nil).ID.String()
	body := `{"market_id":"` + mkt + `","side":"yes","type":"buy","shares":1}`
	for i, names := range [][3]string{
		{"authorization", "idempotency-key", "x-request-id"},
		{"AUTHORIZATION", "IDEMPOTENCY-KEY", "X-REQUEST-ID"},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rd := bufio.NewReader(conn)
		for n := range 2 {
			id := fmt.Sprintf("case-%d-%d", i, n)
			if _, err := fmt.Fprintf(conn, "POST /api/markets/trade HTTP/1.1\r\nHost: x\r\n%s: Bearer %s\r\n%s: order-%d\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				names[0], key, names[1], i, names[2], id, len(body), body); err != nil {
				t.Fatal(err)
			}
			r, err := http.ReadResponse(rd, nil)
			if err != nil {
				t.Fatal(err)
			}
			answer, err := io.ReadAll(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, body %s", names, r.StatusCode, answer)
			}
			if got := r.Header.Get(HeaderRequestID); got != id {
				t.Errorf("%s: request id %q, want %q", names, got, id)
			}
			if got, want := r.Header.Get(HeaderReplayed), map[bool]string{true: "true"}[n == 1]; got != want {
				t.Errorf("%s, request %d: %s %q, want %q", names, n, HeaderReplayed, got, want)
			}
		}
	}
}

// TestRequestIDsUniqueAcrossConnections: generated ids stay unique and of
// the documented form (docs/API.md, "Request ids") over connections of
// every shard, each generating several.
func TestRequestIDsUniqueAcrossConnections(t *testing.T) {
	g := newRequestIDs()
	form := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}$`)
	seen := map[string]bool{}
	counts := map[int]uint64{}
	for range 4 * connShards {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil) // a connection id of its own
		for range 3 {
			ctx.Response.Reset()
			g.set(&ctx)
			id := requestID(&ctx)
			if !form.MatchString(id) {
				t.Fatalf("id %q: want 32 hex digits around a dash", id)
			}
			// The second half is the shard's number and its count, in hex.
			shard := connShard(&ctx)
			counts[shard]++
			if want := fmt.Sprintf("%s-%016x", g.prefix[:], uint64(shard)<<idShardShift|counts[shard]); id != want {
				t.Fatalf("id %q, want %q", id, want)
			}
			if seen[id] {
				t.Fatalf("id %q generated twice", id)
			}
			seen[id] = true
		}
	}
}

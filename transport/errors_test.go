package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/strictjson"
)

// TestRoutingErrors checks the JSON answers to unknown paths and wrong
// methods, and that a body of exactly 64 KiB is read (docs/API.md,
// "Conventions"); TestBodyTooLarge has the bodies over it.
func TestRoutingErrors(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess := ts.register("trader")
	adm := ts.admin()
	id := ts.createMarket(adm, nil).ID.String()
	// exactly is a valid trade body of exactly the limit, padded with
	// spaces: it is read and answered on its merits.
	exactly := fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1}`, uuid.NewString())
	exactly += strings.Repeat(" ", DefaultMaxBodyBytes-len(exactly))
	tests := []struct {
		name   string
		method string
		path   string
		a      auth
		body   string
		status int
		msg    string
	}{
		{"unknown path", "GET", "/api/nope", auth{}, "", 404, "Not found"},
		{"root", "GET", "/", auth{}, "", 404, "Not found"},
		{"unknown path with a body", "POST", "/api/markets/trade/now", auth{session: sess}, `{}`, 404, "Not found"},
		{"trailing slash", "GET", "/api/markets/active/", auth{}, "", 404, "Not found"},
		{"unknown path, session", "GET", "/api/admin", auth{session: sess}, "", 404, "Not found"},
		{"wrong method on a list", "DELETE", "/api/markets", auth{}, "", 405, "Method not allowed"},
		{"wrong method on trade", "PUT", "/api/markets/trade", auth{session: sess}, `{}`, 405, "Method not allowed"},
		{"wrong method on settle", "GET", "/api/admin/settle", auth{session: adm}, "", 405, "Method not allowed"},
		{"wrong method on stats", "POST", "/api/admin/stats", auth{session: adm}, `{}`, 405, "Method not allowed"},
		{"wrong method on a market", "DELETE", "/api/markets/" + id, auth{}, "", 405, "Method not allowed"},
		{"wrong method before credentials", "PATCH", "/api/points", auth{}, "", 405, "Method not allowed"},
		{"OPTIONS", "OPTIONS", "/api/markets", auth{}, "", 405, "Method not allowed"},
		{"GET on trade, which the {id} route also matches", "GET", "/api/markets/trade", auth{}, "", 405, "Method not allowed"},
		{"GET on split-merge", "GET", "/api/markets/split-merge", auth{session: sess}, "", 405, "Method not allowed"},
		{"body of exactly the limit", "POST", "/api/markets/trade", auth{session: sess}, exactly, 404, "Market not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.observe(auth{session: sess}, id)
			r := ts.do(tt.method, tt.path, tt.a, tt.body)
			ts.expectError(r, tt.status, tt.msg, "")
			if allow := r.header.Get("Allow"); tt.status == 405 && (allow == "" || strings.Contains(allow, "OPTIONS")) {
				t.Errorf("Allow %q: want the methods the path takes, without OPTIONS (not served)", allow)
			}
			ts.unchanged(auth{session: sess}, id, before)
		})
	}
}

// rawExchange sends raw on a new connection and reads the answer. The
// request is written while the answer is read, and a failed write is
// ignored: the server answers a body over the limit without reading it
// and closes the connection, which may reset a write still under way
// (fasthttp does not drain the rest of the body first).
func rawExchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	written := make(chan struct{})
	go func() {
		defer close(written)
		_, _ = io.WriteString(conn, raw)
	}()
	defer func() { <-written }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to %.60q...: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestBodyTooLarge sends bodies over 64 KiB, sent whole, only declared, or
// chunked, with and without credentials: each answers a JSON 413, after
// the routing answers and before the credential checks (docs/API.md,
// "Order of checks"), and changes nothing. A request that is not HTTP
// gets a JSON 400.
func TestBodyTooLarge(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess := ts.register("trader")
	id := ts.createMarket(ts.admin(), nil).ID.String()
	over := fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"reasoning":"%s"}`, id, strings.Repeat(" ", DefaultMaxBodyBytes))
	whole := func(method, path, header string) string {
		return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s",
			method, path, len(over), header, over)
	}
	declared := func(method, path string) string {
		return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n", method, path, DefaultMaxBodyBytes+1)
	}
	chunked := func(path, header string) string {
		const chunkBytes = 0x4000 // five chunks pass the 64 KiB limit
		var b strings.Builder
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n%s\r\n", path, header)
		for range DefaultMaxBodyBytes/chunkBytes + 1 {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", chunkBytes, strings.Repeat(" ", chunkBytes))
		}
		b.WriteString("0\r\n\r\n")
		return b.String()
	}
	session := "Cookie: " + sessionCookie + "=" + sess + "\r\n"
	small := fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1}`, uuid.NewString())
	smallChunked := fmt.Sprintf("POST /api/markets/trade HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n",
		session, len(small), small)
	badKey := "Authorization: Bearer svc_live_" + strings.Repeat("0", 32) + "\r\n"
	tests := []struct {
		name   string
		raw    string
		status int
		msg    string
	}{
		{"whole, session", whole("POST", "/api/markets/trade", session), 413, ""},
		{"whole, no credentials", whole("POST", "/api/markets/trade", ""), 413, ""},
		{"whole, bad key", whole("POST", "/api/admin/settle", badKey), 413, ""},
		{"whole, unknown path", whole("POST", "/api/nope", session), 404, "Not found"},
		{"whole, wrong method", whole("PUT", "/api/markets/trade", session), 405, "Method not allowed"},
		{"declared only", declared("POST", "/api/markets"), 413, ""},
		{"declared only, unknown path", declared("POST", "/api/unknown"), 404, "Not found"},
		{"declared only, wrong method", declared("PUT", "/api/markets"), 405, "Method not allowed"},
		{"chunked, session", chunked("/api/markets/trade", session), 413, ""},
		{"chunked, admin route", chunked("/api/admin/settle", ""), 413, ""},
		{"chunked, unknown path", chunked("/api/nope", session), 404, "Not found"},
		{"chunked, wrong method", strings.Replace(chunked("/api/markets/trade", ""), "POST", "PUT", 1), 405, "Method not allowed"},
		{"chunked, unknown path, escaped", chunked("/api/mar%6Bets/nope", ""), 404, "Not found"},
		{"chunked, known path, escaped", chunked("/api/mar%6Bets/trade", ""), 413, ""},
		{"chunked within the limit, read and answered", smallChunked, 404, "Market not found"},
		{"not HTTP", "HELLO\r\n\r\n", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.observe(auth{session: sess}, id)
			resp, body := rawExchange(t, strings.TrimPrefix(ts.url, "http://"), tt.raw)
			msg, err := parseErrorBody(resp.StatusCode, resp.Header.Get(HeaderRequestID), body)
			if err != nil {
				t.Error(err)
			}
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != contentTypeJSON ||
				tt.msg != "" && msg != tt.msg {
				t.Errorf("status %d, Content-Type %q, body %s; want %d, JSON, %q",
					resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.status, tt.msg)
			}
			ts.unchanged(auth{session: sess}, id, before)
		})
	}
}

// TestBodyDecodingErrors sends malformed bodies to every endpoint of this
// file's scope that takes one: each answers 400 in an {"error": "..."}
// body, naming the field when one is at fault, and changes nothing.
func TestBodyDecodingErrors(t *testing.T) {
	ts := newTestServer(t, Config{})
	adm := ts.admin()
	sess := ts.register("trader")
	id := ts.createMarket(adm, nil).ID.String()
	valid := fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1}`, id)
	tests := []struct {
		name  string
		body  string
		field string // "" when the body as a whole is at fault
	}{
		{"truncated", `{"market_id":`, ""},
		{"not JSON", `market_id=1`, ""},
		{"empty", ``, ""},
		{"only whitespace", "  \n", ""},
		{"an array", `[` + valid + `]`, ""},
		{"a string", `"trade"`, ""},
		{"null", `null`, ""},
		{"trailing garbage", valid + ` x`, ""},
		{"two objects", valid + valid, ""},
		{"trailing comma", strings.TrimSuffix(valid, "}") + `,}`, ""},
		{"single quotes", `{'side':'yes'}`, ""},
		{"invalid UTF-8", fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"reasoning":"`, id) + "\xff\xfe" + `"}`, ""},
		{"duplicate key", fmt.Sprintf(`{"market_id":%q,"side":"yes","side":"no","shares":1}`, id), "side"},
		{"duplicate key, same value", fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"shares":1}`, id), "shares"},
		{"unknown field", fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"leverage":10}`, id), "leverage"},
		{"field in other case", fmt.Sprintf(`{"market_id":%q,"Side":"yes","shares":1}`, id), "Side"},
		{"wrong type", fmt.Sprintf(`{"market_id":%q,"side":["yes"],"shares":1}`, id), "side"},
		{"null field", fmt.Sprintf(`{"market_id":%q,"side":null,"shares":1}`, id), "side"},
	}
	endpoints := []struct {
		path string
		a    auth
	}{
		{"/api/markets/trade", auth{session: sess}},
		{"/api/markets/split-merge", auth{session: sess}},
		{"/api/markets", auth{session: adm}},
		{"/api/admin/settle", auth{session: adm}},
	}
	for _, ep := range endpoints {
		for _, tt := range tests {
			if tt.field != "" && ep.path != "/api/markets/trade" {
				continue // field names are the trade's
			}
			t.Run(ep.path+" "+tt.name, func(t *testing.T) {
				ts := ts.sub(t)
				before := ts.observe(auth{session: sess}, id)
				r := ts.do("POST", ep.path, ep.a, tt.body)
				if tt.field != "" {
					ts.expectField(r, tt.field)
				} else {
					ts.expectError(r, http.StatusBadRequest, "", "")
				}
				ts.unchanged(auth{session: sess}, id, before)
			})
		}
	}
}

// TestErrorTable walks errorTable: every row's error, wrapped as callers
// wrap them, maps to its row; the rows hold the messages docs/API.md
// gives; and anything else is a 500 "Internal server error".
func TestErrorTable(t *testing.T) {
	seen := map[error]bool{}
	for _, row := range errorTable {
		t.Run(row.err.Error(), func(t *testing.T) {
			if seen[row.err] {
				t.Fatalf("error %v has two rows", row.err)
			}
			seen[row.err] = true
			for _, err := range []error{
				row.err,
				fmt.Errorf("core: trade: %w", row.err),
				fmt.Errorf("transport: %w", fmt.Errorf("core: %w: detail", row.err)),
			} {
				ae, ok := toAPIError(err)
				if !ok || ae.status != row.status || ae.msg != row.msg || ae.retryAfterSeconds != row.retry {
					t.Errorf("toAPIError(%q) = %+v, %v; want %d %q retry %d", err, ae, ok, row.status, row.msg, row.retry)
				}
			}
		})
	}

	// The answers docs/API.md gives by name, word for word.
	contract := []struct {
		err    error
		status int
		msg    string
	}{
		{core.ErrMarketNotFound, 404, "Market not found"},
		{core.ErrMarketNotActive, 400, "Market is not active"},
		{core.ErrMarketResolved, 400, "Market already resolved"},
		{core.ErrInsufficientBalance, 400, "Insufficient balance"},
		{core.ErrInsufficientShares, 400, "Insufficient shares"},
		{core.ErrInsufficientLiquidity, 400, "Insufficient liquidity"},
		{core.ErrLiquidityLimit, 400, "Market liquidity limit"},
		{core.ErrSlippage, 400, "Slippage limit exceeded"},
		{core.ErrKeyNotFound, 404, "Key not found"},
		{core.ErrKeyLimit, 400, "Active key limit reached"},
		{core.ErrAdminRequired, 403, "Admin role required"},
		{core.ErrSessionNotFound, 401, "Authentication required"},
		{core.ErrWalletRequired, 400, "Link a wallet first"},
	}
	for _, c := range contract {
		t.Run("contract "+c.msg, func(t *testing.T) {
			ae, ok := toAPIError(fmt.Errorf("op: %w", c.err))
			if !ok || ae.status != c.status || ae.msg != c.msg {
				t.Errorf("toAPIError(%v) = %+v, %v; want %d %q", c.err, ae, ok, c.status, c.msg)
			}
		})
	}

	// Errors that carry their own answer, and errors that have none.
	typed := []struct {
		name   string
		err    error
		status int
		msg    string
		known  bool
	}{
		{"field error", fmt.Errorf("core: create: %w", &core.FieldError{Field: "title", Reason: "is required"}), 400, "title: is required", true},
		{"body error", fmt.Errorf("decode: %w", &strictjson.Error{Field: "shares", Reason: "must be a number"}), 400, "shares: must be a number", true},
		{"api error", fmt.Errorf("admit: %w", errAdminRole), 403, "Admin role required", true},
		{"unknown error", errors.New("disk on fire"), 500, "Internal server error", false},
		{"wrapped unknown error", fmt.Errorf("wal: append: %w", io.ErrShortWrite), 500, "Internal server error", false},
		{"domain error of another layer", core.ErrCorruptReplay, 500, "Internal server error", false},
	}
	for _, tt := range typed {
		t.Run(tt.name, func(t *testing.T) {
			ae, ok := toAPIError(tt.err)
			if ok != tt.known || ae.status != tt.status || ae.msg != tt.msg {
				t.Errorf("toAPIError(%v) = %+v, %v; want %d %q, %v", tt.err, ae, ok, tt.status, tt.msg, tt.known)
			}
		})
	}
}

// TestHandlerFailures registers, on a test server's router before it
// serves, a route that panics and one that returns an error no table
// maps: both answer a JSON 500 and are logged with their cause, and the
// connection that got the panic's 500 serves the next request.
func TestHandlerFailures(t *testing.T) {
	logs, logger := newLogBuffer()
	ts, _ := newClockServer(t, Config{Logger: logger}, func(s *Server) {
		s.router.GET("/test/panic", func(*fasthttp.RequestCtx) { panic("test panic: boom") })
		s.router.GET("/test/unmapped", s.serve(&route{method: "GET", path: "/test/unmapped", access: public,
			handle: func(*fasthttp.RequestCtx, *caller) error {
				return fmt.Errorf("test: %w", errors.New("disk on fire"))
			}}))
	})

	tests := []struct {
		path string
		log  []string
	}{
		{"/test/panic", []string{"handler panic", "test panic: boom", "/test/panic"}},
		{"/test/unmapped", []string{"request failed", "disk on fire", "/test/unmapped"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expect(ts.do("GET", tt.path, auth{}, ""), http.StatusInternalServerError, "Internal server error")
			for _, want := range tt.log {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, logs.String())
				}
			}
		})
	}

	t.Run("connection survives a panic", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rd := bufio.NewReader(conn)
		for i, path := range []string{"/test/panic", "/api/markets/active", "/test/panic", "/api/markets/active"} {
			if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: test\r\n\r\n", path); err != nil {
				t.Fatalf("request %d on the same connection: %v", i, err)
			}
			resp, err := http.ReadResponse(rd, nil)
			if err != nil {
				t.Fatalf("response %d (%s) on the same connection: %v", i, path, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := http.StatusOK
			if strings.HasPrefix(path, "/test/") {
				want = http.StatusInternalServerError
				if msg, err := parseErrorBody(resp.StatusCode, resp.Header.Get(HeaderRequestID), body); err != nil || msg != "Internal server error" {
					t.Errorf("panic answer %q (%v), want the error body of \"Internal server error\"", body, err)
				}
			}
			if resp.StatusCode != want || resp.Header.Get("Content-Type") != contentTypeJSON || resp.Close {
				t.Errorf("%s: status %d, Content-Type %q, close %v; want %d, JSON, kept open",
					path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Close, want)
			}
		}
	})
}

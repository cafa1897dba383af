package transport

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestConnsPerClient: a client address holds at most MaxConnsPerClient
// open connections; one more is answered 503 and closed, and a closed
// connection frees its place. It failed before: no bound per address.
func TestConnsPerClient(t *testing.T) {
	ts := newTestServer(t, Config{MaxConnsPerClient: 2})
	addr := strings.TrimPrefix(ts.url, "http://")
	get := func(c net.Conn) *http.Response {
		t.Helper()
		if _, err := io.WriteString(c, "GET /api/markets HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := dial(), dial()
	for _, c := range []net.Conn{a, b} {
		if resp := get(c); resp.StatusCode != http.StatusOK {
			t.Fatalf("connection within the limit: %d", resp.StatusCode)
		}
	}
	c := dial()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("third connection: %v", err)
	}
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || body["code"] != "too_many_connections" ||
		body["error"] != "Too many connections from this address" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("third connection: %d %v %v", resp.StatusCode, resp.Header, body)
	}
	if err := checkErrorCode(resp.StatusCode, body["code"], body["error"]); err != nil {
		t.Error(err)
	}
	a.Close()
	// The server notices the close when its read returns; until then the
	// place may still be taken, so retry a few dials (no timing).
	for i := 0; ; i++ {
		d := dial()
		if resp := get(d); resp.StatusCode == http.StatusOK {
			break
		} else if i == 1000 {
			t.Fatalf("no place freed after a close: %d", resp.StatusCode)
		}
	}
	if resp := get(b); resp.StatusCode != http.StatusOK {
		t.Errorf("open connection after the refusals: %d", resp.StatusCode)
	}
}

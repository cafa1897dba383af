package transport

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/manualclock"
)

// Helpers of the tests of the access rules: accounts, sessions, keys and
// rate limits (auth_test.go, keys_test.go, ratelimit_http_test.go).

// stepClockStart is where a stepClock begins: a whole second, so that window
// ends, Retry-After and X-RateLimit-Reset are exact figures, and far from
// the real time, so that a forgotten real clock shows in a failure.
var stepClockStart = time.Date(2031, time.March, 4, 5, 6, 7, 0, time.UTC)

// newSteppedServer is newTestServer with a clock the test advances, from
// stepClockStart.
func newSteppedServer(t *testing.T, cfg Config) (*testServer, *manualclock.Clock) {
	t.Helper()
	clk := manualclock.New(stepClockStart)
	return startTestServer(t, cfg, clk, nil), clk
}

// registerAccount registers name and returns its session and account ID.
func (ts *testServer) registerAccount(name string) (string, uuid.UUID) {
	ts.t.Helper()
	session := ts.register(name)
	a, ok := ts.eng.AccountByName(name)
	if !ok {
		ts.t.Fatalf("account %s not found after registering", name)
	}
	return session, a.ID
}

// adminWithID is admin() with the account's ID.
func (ts *testServer) adminWithID() (string, uuid.UUID) {
	ts.t.Helper()
	session := ts.admin()
	a, ok := ts.eng.AccountByName("admin")
	if !ok {
		ts.t.Fatal("admin account not found")
	}
	return session, a.ID
}

// postKey posts body to POST /api/keys with the session, expects 201 and
// returns the decoded answer.
func (ts *testServer) postKey(session, body string) map[string]any {
	ts.t.Helper()
	r := ts.do("POST", "/api/keys", auth{session: session}, body)
	ts.expect(r, http.StatusCreated, "")
	return decodeExact(ts.t, r.body)
}

// sessionCookieIn returns the session cookie a response set, or nil.
func sessionCookieIn(r response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == sessionCookie {
			return c
		}
	}
	return nil
}

// expectNamed fails unless r has the status and an error message that
// names field (the form of strictjson's and fieldError's messages).
func (ts *testServer) expectNamed(r response, status int, field string) {
	ts.t.Helper()
	ts.expect(r, status, "")
	if msg := r.errorMessage(ts.t); !strings.HasPrefix(msg, field+":") && !strings.HasPrefix(msg, field+"[") {
		ts.t.Fatalf("error %q does not name the field %q", msg, field)
	}
}

// accessState is what a refused request must leave as it was: the platform's
// totals and one account with its keys. Key usage is left out, since a
// request refused after authentication still counts as a use of its key
// (docs/API.md, "Authentication"); tests that care compare it themselves.
type accessState struct {
	stats   core.Stats
	account core.AccountView
	keys    []core.Key
}

func (ts *testServer) accessStateOf(account uuid.UUID) accessState {
	ts.t.Helper()
	a, ok := ts.eng.Account(account)
	if !ok {
		ts.t.Fatalf("account %v not found", account)
	}
	keys := ts.eng.Keys(account)
	for i := range keys {
		keys[i].TotalRequests, keys[i].LastUsedAt = 0, 0
	}
	return accessState{stats: ts.eng.Stats(), account: a, keys: keys}
}

// expectUnchanged fails unless the state of account is still before.
func (ts *testServer) expectUnchanged(before accessState, account uuid.UUID) {
	ts.t.Helper()
	after := ts.accessStateOf(account)
	if !reflect.DeepEqual(before.stats, after.stats) {
		ts.t.Errorf("platform totals changed:\nbefore %+v\nafter  %+v", before.stats, after.stats)
	}
	if !reflect.DeepEqual(before.account, after.account) {
		ts.t.Errorf("account changed:\nbefore %+v\nafter  %+v", before.account, after.account)
	}
	if !reflect.DeepEqual(before.keys, after.keys) {
		ts.t.Errorf("keys changed:\nbefore %+v\nafter  %+v", before.keys, after.keys)
	}
}

// decodeExact decodes a JSON object keeping numbers as json.Number, so
// that an integer field can be told from a number field.
func decodeExact(t *testing.T, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("body %s is not a JSON object: %v", body, err)
	}
	return m
}

// shape is the JSON type a response field must have.
type shape int

const (
	sString       shape = iota
	sUUID               // a string in canonical UUID form
	sTime               // an ISO 8601 UTC timestamp with a Z
	sTimeOrNull         // sTime or null
	sInt                // a number without fraction or exponent
	sNumber             // any number
	sStrings            // an array of strings
	sObject             // an object
	sObjectOrNull       // an object or null
	sArray              // an array
	sStringOrNull       // a string or null
	sBool               // true or false
)

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	intRE  = regexp.MustCompile(`^-?[0-9]+$`)
	// keyRE is the key of docs/API.md, "Authentication": svc_live_ and 32
	// lowercase hex digits.
	keyRE = regexp.MustCompile(`^svc_live_[0-9a-f]{32}$`)
)

// isAPITime reports whether s is an ISO 8601 UTC timestamp ending in Z
// (docs/API.md, "Conventions").
func isAPITime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && strings.HasSuffix(s, "Z")
}

func hasShape(v any, k shape) bool {
	switch k {
	case sString:
		_, ok := v.(string)
		return ok
	case sUUID:
		s, ok := v.(string)
		return ok && uuidRE.MatchString(s)
	case sTime:
		s, ok := v.(string)
		return ok && isAPITime(s)
	case sTimeOrNull:
		return v == nil || hasShape(v, sTime)
	case sInt:
		n, ok := v.(json.Number)
		return ok && intRE.MatchString(n.String())
	case sNumber:
		_, ok := v.(json.Number)
		return ok
	case sStrings:
		a, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range a {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	case sObject:
		_, ok := v.(map[string]any)
		return ok
	case sObjectOrNull:
		return v == nil || hasShape(v, sObject)
	case sArray:
		_, ok := v.([]any)
		return ok
	case sStringOrNull:
		return v == nil || hasShape(v, sString)
	case sBool:
		_, ok := v.(bool)
		return ok
	}
	panic(fmt.Sprintf("BUG: unknown shape %d", k))
}

// checkShape fails unless obj has exactly the fields of want, each of its
// shape: a missing field, a wrong type, and also a field the contract does
// not list (such as a key's secret or hash in a listing) fail.
func checkShape(t *testing.T, where string, obj any, want map[string]shape) {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: %v is not an object", where, obj)
	}
	for name, k := range want {
		v, ok := m[name]
		if !ok {
			t.Errorf("%s: no field %q in %v", where, name, m)
			continue
		}
		if !hasShape(v, k) {
			t.Errorf("%s.%s: %#v is not of shape %d", where, name, v, k)
		}
	}
	for name := range m {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected field %q (= %v)", where, name, m[name])
		}
	}
}

// jsonAt returns the value at a dotted path of a decoded object.
func jsonAt(t *testing.T, m map[string]any, path string) any {
	t.Helper()
	var v any = m
	for _, name := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %v is not an object at %q", path, v, name)
		}
		if v, ok = o[name]; !ok {
			t.Fatalf("%s: no field %q in %v", path, name, o)
		}
	}
	return v
}

// jsonStr returns the string at path.
func jsonStr(t *testing.T, m map[string]any, path string) string {
	t.Helper()
	s, ok := jsonAt(t, m, path).(string)
	if !ok {
		t.Fatalf("%s: %v is not a string", path, jsonAt(t, m, path))
	}
	return s
}

// jsonInt returns the integer at path.
func jsonInt(t *testing.T, m map[string]any, path string) int64 {
	t.Helper()
	n, ok := jsonAt(t, m, path).(json.Number)
	if !ok {
		t.Fatalf("%s: %v is not a number", path, jsonAt(t, m, path))
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %v is not an integer", path, n)
	}
	return i
}

// jsonAmount returns the money amount at path, exactly.
func jsonAmount(t *testing.T, m map[string]any, path string) money.Amount {
	t.Helper()
	n, ok := jsonAt(t, m, path).(json.Number)
	if !ok {
		t.Fatalf("%s: %v is not a number", path, jsonAt(t, m, path))
	}
	a, err := money.Parse(n.String())
	if err != nil {
		t.Fatalf("%s: %v is not an amount: %v", path, n, err)
	}
	return a
}

// jsonStrings returns the strings at path, sorted, for comparing scope sets.
func jsonStrings(t *testing.T, m map[string]any, path string) []string {
	t.Helper()
	a, ok := jsonAt(t, m, path).([]any)
	if !ok {
		t.Fatalf("%s: %v is not an array", path, jsonAt(t, m, path))
	}
	out := make([]string, 0, len(a))
	for _, e := range a {
		s, ok := e.(string)
		if !ok {
			t.Fatalf("%s: %v is not a string", path, e)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// apiTime formats a time as the API writes it.
func apiTime(tm time.Time) string { return tm.UTC().Format(time.RFC3339Nano) }

// listedKey returns the item of a GET /api/keys answer with the given id.
func listedKey(t *testing.T, list map[string]any, id string) map[string]any {
	t.Helper()
	keys, ok := jsonAt(t, list, "keys").([]any)
	if !ok {
		t.Fatalf("keys is not an array: %v", list)
	}
	for _, k := range keys {
		if m, ok := k.(map[string]any); ok && m["id"] == id {
			return m
		}
	}
	t.Fatalf("key %s not listed in %v", id, list)
	return nil
}

// rateLimitHeaders are the X-RateLimit-* headers of a response (docs/API.md,
// "Rate limits").
type rateLimitHeaders struct {
	present          bool
	limit, remaining int
	reset            int64
}

// rateLimitOf parses the rate-limit headers of r; present is false when none is
// set, and a partial or malformed set fails the test.
func rateLimitOf(t *testing.T, r response) rateLimitHeaders {
	t.Helper()
	names := []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
	var vals []int64
	for _, n := range names {
		v := r.header.Get(n)
		if v == "" {
			continue
		}
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %q is not an integer", n, v)
		}
		vals = append(vals, i)
	}
	switch len(vals) {
	case 0:
		return rateLimitHeaders{}
	case len(names):
		return rateLimitHeaders{present: true, limit: int(vals[0]), remaining: int(vals[1]), reset: vals[2]}
	}
	t.Fatalf("only some rate-limit headers are set: %v", r.header)
	return rateLimitHeaders{}
}

// retryAfter returns the Retry-After seconds of r, failing when it is
// absent or not an integer.
func retryAfterOf(t *testing.T, r response) int {
	t.Helper()
	v := r.header.Get("Retry-After")
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("Retry-After %q is not an integer; headers %v", v, r.header)
	}
	return n
}

// plainStatus makes a request without the testing.T of the harness, for
// goroutines other than the test's, and returns the status.
func plainStatus(client *http.Client, method, url string, a auth, body string) (int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, err
	}
	if a.key != "" {
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	if a.session != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: a.session})
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// concurrently makes n copies of one request from n goroutines at once and
// returns how many got each status.
func (ts *testServer) concurrently(n int, method, path string, a auth, body string) map[int]int {
	ts.t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, err := plainStatus(client, method, ts.url+path, a, body)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		ts.t.Error(err)
	}
	return statuses
}

// sha256Of returns the SHA-256 of a secret, as the server stores it.
func sha256Of(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// jsonOf encodes v for a request body; test values always encode.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: test body %v: %v", v, err))
	}
	return string(b)
}

// announceOversized sends the head of a request whose Content-Length is
// over the server's body limit, and no body, and returns the answer. The
// server refuses it on the header alone; not sending the body keeps the
// client from writing into a connection the server has already closed,
// which net/http reports as a broken pipe instead of the answer.
func (ts *testServer) announceOversized(method, path string, a auth) response {
	ts.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		ts.t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		ts.t.Fatal(err)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
		method, path, DefaultMaxBodyBytes+1)
	if a.key != "" {
		fmt.Fprintf(&head, "Authorization: Bearer %s\r\n", a.key)
	}
	if a.session != "" {
		fmt.Fprintf(&head, "Cookie: %s=%s\r\n", sessionCookie, a.session)
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		ts.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
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

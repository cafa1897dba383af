// Package apiclient is the client side of marketd's HTTP API that the
// tests of transport (a server in the test process) and of cmd/marketd (the
// real binary) share: credentials, one request with its answer, the session
// cookie, and the check of an error body's shape (docs/API.md, "Errors").
package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SessionCookie is the name of the session cookie (docs/API.md,
// "Authentication").
const SessionCookie = "session"

// RequestIDHeader is the header every answer carries its request id in.
const RequestIDHeader = "X-Request-Id"

// Cred is how a request authenticates: an API key, a session token, or
// neither.
type Cred struct {
	Key     string
	Session string
}

// Reply is an answer as the tests look at it.
type Reply struct {
	Status  int
	Header  http.Header
	Cookies []*http.Cookie
	Body    []byte
}

// Session returns the session token the answer set, or "".
func (r *Reply) Session() string {
	for _, c := range r.Cookies {
		if c.Name == SessionCookie {
			return c.Value
		}
	}
	return ""
}

// Client sends requests to one server. It is safe for concurrent use.
type Client struct {
	Base string       // "http://127.0.0.1:PORT"
	HTTP *http.Client // with a timeout: a hung server fails the test
}

// Do sends one request with body (nil: none, else sent as JSON) and the
// extra headers, and reads the whole answer. An error means no answer
// arrived.
func (c *Client) Do(method, path string, cr Cred, body []byte, headers map[string]string) (Reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		return Reply{}, fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cr.Key != "" {
		req.Header.Set("Authorization", "Bearer "+cr.Key)
	}
	if cr.Session != "" {
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: cr.Session})
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Reply{}, fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, fmt.Errorf("apiclient: %s %s: read body: %w", method, path, err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Cookies: resp.Cookies(), Body: b}, nil
}

// ErrorBody is an error answer's body (docs/API.md, "Errors").
type ErrorBody struct {
	Error     string // the message
	Code      string // the stable code
	Field     string // the field at fault, "" when none
	RequestID string
}

// ParseError checks the shape of an error answer's body and returns it:
// a JSON object holding a string error, a string code and the request's id
// equal to the answer's X-Request-Id; a field, when present, is the one the
// message starts with; no other member.
func ParseError(r Reply) (ErrorBody, error) {
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return ErrorBody{}, fmt.Errorf("error body %q is not a JSON object: %v", r.Body, err)
	}
	var e ErrorBody
	msg, ok := m["error"].(string)
	code, codeOK := m["code"].(string)
	if _, idOK := m["request_id"]; !ok || !codeOK || !idOK {
		return ErrorBody{}, fmt.Errorf("error body %s lacks a string error, a code or a request_id", r.Body)
	}
	e.Error, e.Code = msg, code
	for k, v := range m {
		switch k {
		case "error", "code":
		case "request_id":
			id, _ := v.(string)
			if want := r.Header.Get(RequestIDHeader); id == "" || id != want {
				return ErrorBody{}, fmt.Errorf("error body %s: request_id %v, X-Request-Id %q", r.Body, v, want)
			}
			e.RequestID = id
		case "field":
			f, _ := v.(string)
			if f == "" || !strings.HasPrefix(msg, f+": ") {
				return ErrorBody{}, fmt.Errorf("error body %s: field %v is not the one the message names", r.Body, v)
			}
			e.Field = f
		default:
			return ErrorBody{}, fmt.Errorf("error body %s has an unknown member %q", r.Body, k)
		}
	}
	return e, nil
}

package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"marketd/internal/apiclient"
)

// maxQuotedBytes bounds the answer quoted in a StatusError.
const maxQuotedBytes = 256

// sessionCookie is the cookie that carries a session (docs/API.md,
// "Authentication").
const sessionCookie = apiclient.SessionCookie

// Client talks to one marketd server.
type Client struct {
	hc      *fasthttp.HostClient
	timeout time.Duration
}

// New returns a client of the server at addr (host:port) that opens at
// most maxConns connections and gives up on a request after timeout.
func New(addr string, maxConns int, timeout time.Duration) *Client {
	return &Client{
		hc: &fasthttp.HostClient{
			Addr:                addr,
			Name:                "marketd-client",
			MaxConns:            maxConns,
			ReadTimeout:         timeout,
			WriteTimeout:        timeout,
			MaxIdleConnDuration: time.Minute,
			MaxConnWaitTimeout:  timeout,
		},
		timeout: timeout,
	}
}

// Addr returns the server's host:port.
func (c *Client) Addr() string { return c.hc.Addr }

// Close closes the idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Credentials authenticate a request: a session token, an API key, or
// neither (public endpoints). The key wins when both are set, as on the
// server.
type Credentials struct {
	Session string
	Key     string
}

// Set writes the credentials into req's headers.
func (cr Credentials) Set(req *fasthttp.Request) {
	switch {
	case cr.Key != "":
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+cr.Key)
	case cr.Session != "":
		req.Header.SetCookie(sessionCookie, cr.Session)
	}
}

// prepare sets req's method, URI and credentials for a request to path on
// the server.
func (c *Client) prepare(req *fasthttp.Request, method, path string, cr Credentials) {
	req.Reset()
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + c.hc.Addr + path)
	if method != fasthttp.MethodGet {
		req.Header.SetContentType("application/json")
	}
	cr.Set(req)
}

// Do sends req and reads the answer into resp, within the client's
// timeout. Its error is a transport failure only: any status is an answer.
func (c *Client) Do(req *fasthttp.Request, resp *fasthttp.Response) error {
	if err := c.hc.DoTimeout(req, resp, c.timeout); err != nil {
		return fmt.Errorf("client: %s %s: %w", req.Header.Method(), req.URI().Path(), err)
	}
	return nil
}

// StatusError is an answer with another status than the one expected.
type StatusError struct {
	Method, Path string
	Status       int
	// Body is the start of the answer (at most 256 bytes).
	Body string
}

// Error names the request and the status and body it got.
func (e *StatusError) Error() string {
	return fmt.Sprintf("client: %s %s: status %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// IsStatus reports whether err is a StatusError with the given status.
func IsStatus(err error, status int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status == status
}

// Call sends in (nil: no body) as JSON to path with method and
// credentials, wants status, and decodes the answer into out (nil: not
// decoded). It returns the session token the answer's cookie sets, "" when
// none.
func (c *Client) Call(method, path string, cr Credentials, in any, status int, out any) (string, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.prepare(req, method, path, cr)
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return "", fmt.Errorf("client: encode the body of %s %s: %w", method, path, err)
		}
		req.SetBodyRaw(raw)
	}
	if err := c.Do(req, resp); err != nil {
		return "", err
	}
	if resp.StatusCode() != status {
		body := resp.Body()
		if len(body) > maxQuotedBytes {
			body = body[:maxQuotedBytes]
		}
		return "", &StatusError{Method: method, Path: path, Status: resp.StatusCode(), Body: string(body)}
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body(), out); err != nil {
			return "", fmt.Errorf("client: decode the answer of %s %s: %w", method, path, err)
		}
	}
	cookie := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(cookie)
	cookie.SetKey(sessionCookie)
	if !resp.Header.Cookie(cookie) {
		return "", nil
	}
	return string(cookie.Value()), nil
}

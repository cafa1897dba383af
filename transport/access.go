package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strconv"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/ratelimit"
)

// authMethod is how a caller proved who it is.
type authMethod uint8

const (
	anonymous authMethod = iota
	bySession
	byKey
)

// String returns the wire name of the method (auth.method of docs/API.md,
// "GET /api/agents/me").
func (m authMethod) String() string {
	switch m {
	case bySession:
		return "session"
	case byKey:
		return "api_key"
	default:
		return "none"
	}
}

// caller is who made a request, as established by the middleware.
type caller struct {
	method  authMethod
	account uuid.UUID
	scopes  core.Scopes
	key     core.Key // the calling key, when method is byKey
	session [32]byte // the session token's hash, when method is bySession
	// idem is the request's Idempotency-Key on a route that stores
	// answers; nil without one.
	idem *idemRequest
}

// Per-minute limits of the tiers (docs/API.md, "Rate limits").
const (
	standardPerMinute = 60
	premiumPerMinute  = 300
)

const (
	keyLiteralPrefix = "svc_live_"
	keyHexLen        = 32
	sessionCookie    = "session"
)

var (
	// headerAuthorization is the header's canonical name: fasthttp
	// normalizes request header names as it parses them, so a lookup by
	// it needs no normalizing of its own (0.1 us a lookup).
	headerAuthorization = []byte(fasthttp.HeaderAuthorization)
	bearerPrefix        = []byte("Bearer ")
	headerLimit         = []byte("X-RateLimit-Limit")
	headerRemaining     = []byte("X-RateLimit-Remaining")
	headerReset         = []byte("X-RateLimit-Reset")
)

// admit runs the access checks of rt in the order of docs/API.md, "Order
// of checks", and fills c with the caller; an error is the answer to give
// instead.
func (s *Server) admit(ctx *fasthttp.RequestCtx, rt *route, c *caller) error {
	if err := s.authenticate(ctx, rt.access == public, c); err != nil {
		return err
	}
	if c.method == anonymous {
		if rt.access != public {
			return errAuthRequired
		}
		return s.limitAnonymous(ctx)
	}
	if rt.access == sessionOnly && c.method != bySession {
		return errSessionRequired
	}
	if rt.scopes != 0 && c.scopes&rt.scopes == 0 {
		return errScope
	}
	if rt.admin && !s.isAdmin(c) {
		return errAdminRole
	}
	return s.limitCaller(ctx, c, rt)
}

// authenticate finds the caller from an Authorization header (an API key)
// or a session cookie. No credentials give an anonymous caller; credentials
// that are malformed, unknown, revoked or expired give 401, except a dead
// session cookie on a public route (publicRoute): a browser keeps sending
// the cookie of a session that expired, and must still be able to log in.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx, publicRoute bool, c *caller) error {
	if h := ctx.Request.Header.PeekCanonical(headerAuthorization); len(h) > 0 {
		return s.authenticateKey(ctx, h, c)
	}
	if tok := ctx.Request.Header.Cookie(sessionCookie); len(tok) > 0 {
		err := s.authenticateSession(ctx, tok, c)
		if err != nil && publicRoute {
			*c = caller{method: anonymous}
			return nil
		}
		return err
	}
	*c = caller{method: anonymous}
	return nil
}

func (s *Server) authenticateKey(ctx context.Context, header []byte, c *caller) error {
	// The scheme name is case-insensitive (RFC 9110 section 11.1).
	if len(header) < len(bearerPrefix) || !bytes.EqualFold(header[:len(bearerPrefix)], bearerPrefix) {
		return errAuthRequired
	}
	key := header[len(bearerPrefix):]
	if !validKeyLiteral(key) {
		return errAuthRequired
	}
	hash := sha256.Sum256(key)
	k, err := s.eng.AuthenticateKey(hash)
	switch {
	case errors.Is(err, core.ErrKeyNotFound):
		// A revocation not yet durable is waited for (docs/API.md,
		// "Durability"); an unknown key waits for nothing.
		if err := s.eng.WaitAuthDurable(ctx, hash); err != nil {
			return err
		}
		return errAuthRequired
	case err != nil:
		return err // the engine is closing: 503, not a bad key
	}
	*c = caller{method: byKey, account: k.Account, scopes: k.Scopes, key: k}
	return nil
}

// validKeyLiteral reports whether b has the form of a key: svc_live_ and
// 32 lowercase hex digits. Anything else cannot match a stored hash.
func validKeyLiteral(b []byte) bool {
	if len(b) != len(keyLiteralPrefix)+keyHexLen || !bytes.HasPrefix(b, []byte(keyLiteralPrefix)) {
		return false
	}
	// A key's digits are random: a comparison per digit mispredicts about
	// half the time, which cost 0.17 us a request in BenchmarkTradeRequest's
	// profile, and a table lookup without a branch does not.
	all := byte(1)
	for _, ch := range b[len(keyLiteralPrefix):] {
		all &= lowerHexDigit[ch]
	}
	return all == 1
}

// lowerHexDigit is 1 for the bytes of a key's hex digits, 0 for any other.
var lowerHexDigit = [256]byte{
	'0': 1, '1': 1, '2': 1, '3': 1, '4': 1, '5': 1, '6': 1, '7': 1, '8': 1, '9': 1,
	'a': 1, 'b': 1, 'c': 1, 'd': 1, 'e': 1, 'f': 1,
}

func (s *Server) authenticateSession(ctx context.Context, token []byte, c *caller) error {
	h := sha256.Sum256(token)
	sess, ok := s.eng.SessionByHash(h)
	if !ok || !sess.Active(s.now().UnixNano()) {
		// As for a key: an end not yet durable is waited for.
		if err := s.eng.WaitAuthDurable(ctx, h); err != nil {
			return err
		}
		return errAuthRequired
	}
	*c = caller{method: bySession, account: sess.Account, scopes: core.AllScopes, session: h}
	return nil
}

// limitCaller applies the caller's rate limit: its key's tier, or the
// premium rate per account for sessions (docs/API.md, "Rate limits"). The
// request's cost is read only when a limit applies: for a batch it is a
// parse of the whole body (requestCost), which the unlimited tier must not
// pay for nothing.
func (s *Server) limitCaller(ctx *fasthttp.RequestCtx, c *caller, rt *route) error {
	key, limit := ratelimit.Key{Kind: ratelimit.KindAccount, ID: c.account}, premiumPerMinute
	if c.method != bySession {
		switch c.key.Tier {
		case core.TierUnlimited:
			return nil // no window, no headers: nothing to pay on this path
		case core.TierPremium:
			key, limit = ratelimit.Key{Kind: ratelimit.KindAPIKey, ID: c.key.ID}, premiumPerMinute
		default:
			key, limit = ratelimit.Key{Kind: ratelimit.KindAPIKey, ID: c.key.ID}, standardPerMinute
		}
	}
	return s.applyLimitN(ctx, key, limit, requestCost(ctx, rt))
}

// limitAnonymous limits requests without credentials per client IP.
func (s *Server) limitAnonymous(ctx *fasthttp.RequestCtx) error {
	if s.cfg.AnonRatePerMinute <= 0 {
		return nil
	}
	return s.applyLimit(ctx, ratelimit.IPKey(s.clientAddr(ctx)), s.cfg.AnonRatePerMinute)
}

func (s *Server) applyLimit(ctx *fasthttp.RequestCtx, k ratelimit.Key, limit int) error {
	return s.applyLimitN(ctx, k, limit, 1)
}

// applyLimitN counts a request as cost requests against k's window: a
// batch of trades counts one per item, and is admitted only when the
// window has room for all of them (docs/API.md, "POST /api/markets/trades").
func (s *Server) applyLimitN(ctx *fasthttp.RequestCtx, k ratelimit.Key, limit, cost int) error {
	d := s.lim.table(k).AllowN(k, limit, cost, s.now())
	if d.Full {
		// Every window of the shard is in use by other clients: shed
		// this one rather than grow without bound.
		return tooManyClients(d.RetryAfterSeconds())
	}
	h := &ctx.Response.Header
	// SetCanonical keeps the spelling of docs/API.md, "Rate limits" (fasthttp
	// would write X-Ratelimit-Limit); header names are case-insensitive anyway.
	// SetCanonical copies the value, so one stack buffer serves all three.
	var num [20]byte
	h.SetCanonical(headerLimit, strconv.AppendInt(num[:0], int64(d.Limit), 10))
	h.SetCanonical(headerRemaining, strconv.AppendInt(num[:0], int64(d.Remaining), 10))
	h.SetCanonical(headerReset, strconv.AppendInt(num[:0], d.ResetUnix(), 10))
	if !d.Allowed {
		return rateLimited(d.RetryAfterSeconds())
	}
	return nil
}

package transport

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/password"
	"marketd/transport/ratelimit"
	"marketd/transport/wire"
)

// Password limits (docs/API.md, "POST /api/auth/register"), in characters.
const (
	minPasswordRunes = 8
	maxPasswordRunes = 128
)

// passwordRunesOK reports whether a new password has an allowed length.
func passwordRunesOK(pw string) bool {
	n := utf8.RuneCountInString(pw)
	return n >= minPasswordRunes && n <= maxPasswordRunes
}

// checkNewPassword refuses a new password that is absent or of a length
// not allowed, naming field.
func checkNewPassword(field string, pw *string) error {
	if pw == nil {
		return fieldError(field, "is required")
	}
	if !passwordRunesOK(*pw) {
		return fieldError(field, "must be %d-%d characters", minPasswordRunes, maxPasswordRunes)
	}
	return nil
}

type credentials struct {
	Name     *string `json:"name"`
	Password *string `json:"password"`
}

func (s *Server) register(ctx *fasthttp.RequestCtx, _ *caller, req *credentials) error {
	switch {
	case req.Name == nil:
		return fieldError("name", "is required")
	case !core.ValidName(*req.Name):
		return fieldError("name", "must be %d-%d characters of A-Z, a-z, 0-9, _ and -", core.MinNameLen, core.MaxNameLen)
	}
	if err := checkNewPassword("password", req.Password); err != nil {
		return err
	}
	// Refuse a taken name before paying for a hash; CreateAccount checks
	// again under its lock, so a race still ends in one account.
	if err := s.eng.NameAvailable(ctx, *req.Name); err != nil {
		return err
	}
	// The per-address limits come before the hash, so that what they
	// refuse costs nothing (docs/API.md, "Failed logins and password
	// hashing").
	addr := s.clientAddr(ctx)
	if err := s.allowRegistration(addr); err != nil {
		return err
	}
	if err := s.allowPasswordCheck(addr, [16]byte{}, false); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, *req.Password)
	if err != nil {
		return err
	}
	a, err := s.eng.CreateAccount(ctx, core.NewAccount{Name: *req.Name, PasswordHash: hash,
		Role: core.RoleSpeculator, Bonus: s.cfg.SignupBonus})
	if err != nil {
		return err
	}
	if err := s.startSession(ctx, &a); err != nil {
		return err
	}
	s.setDeviceCookie(ctx, a.ID)
	return writeJSON(ctx, fasthttp.StatusCreated, wire.AgentAnswer{Agent: agentOf(&a)})
}

func (s *Server) login(ctx *fasthttp.RequestCtx, _ *caller, req *credentials) error {
	if req.Name == nil {
		return fieldError("name", "is required")
	}
	if req.Password == nil {
		return fieldError("password", "is required")
	}
	now := s.now()
	addr := s.clientAddr(ctx)
	a, found := s.eng.AccountByName(*req.Name)
	known := found && a.ID != core.HouseID
	att := password.Attempt{Name: *req.Name, Client: ratelimit.IPKey(addr).ID}
	var hash []byte
	var device [16]byte
	var hasDevice bool
	if known {
		hash = a.Info.PasswordHash
		// A device cookie counts only for the account it was issued to.
		if device, hasDevice = s.deviceOf(ctx, a.ID); hasDevice {
			att.Device = hex.EncodeToString(device[:])
		}
	}
	if wait, blocked := s.lim.lockout.Check(att, now); blocked {
		return rateLimited(ceilSeconds(wait))
	}
	if err := s.allowPasswordCheck(addr, device, hasDevice); err != nil {
		return err
	}
	// An unknown name is compared against a dummy hash, so that it costs
	// what a wrong password costs and answers the same. A login with a
	// device cookie may use the hashing pool's reserve.
	compare := s.hasher.Compare
	if hasDevice {
		compare = s.hasher.CompareTrusted
	}
	ok, err := compare(ctx, hash, *req.Password)
	if err != nil {
		return err
	}
	if !ok || !known {
		s.lim.lockout.Fail(att, now)
		if known {
			// The hash compared may be a password change's that is not
			// durable yet: the refusal waits for it, as every answer does.
			if err := s.eng.WaitAccountDurable(ctx, a.ID); err != nil {
				return err
			}
		}
		return errCredentials
	}
	s.lim.lockout.Succeed(att)
	if err := s.startSession(ctx, &a); err != nil {
		return err
	}
	s.setDeviceCookie(ctx, a.ID)
	return writeJSON(ctx, fasthttp.StatusOK, wire.AgentAnswer{Agent: agentOf(&a)})
}

// startSession stores a new session for the account and sets its cookie
// (docs/API.md, "Authentication").
func (s *Server) startSession(ctx *fasthttp.RequestCtx, a *core.AccountView) error {
	token, hash := newSessionToken()
	sess := core.Session{Hash: hash, Account: a.ID, ExpiresAt: s.now().Add(s.cfg.SessionTTL).UnixNano()}
	if err := s.eng.CreateSession(ctx, sess); err != nil {
		return err
	}
	var ck fasthttp.Cookie
	ck.SetKey(sessionCookie)
	ck.SetValue(token)
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	ck.SetPath("/")
	ctx.Response.Header.SetCookie(&ck)
	return nil
}

type logoutResponse struct {
	Status string `json:"status"`
}

func (s *Server) logout(ctx *fasthttp.RequestCtx, c *caller) error {
	if err := s.eng.RevokeSession(ctx, c.session); err != nil {
		return err
	}
	// Expire the browser's cookie. A deletion only matches a cookie of the
	// same Path (fasthttp's DelClientCookie sets none, so the browser would
	// keep the one at "/"), and a revoked token that is still sent gets 401
	// on every route, login included.
	var ck fasthttp.Cookie
	ck.SetKey(sessionCookie)
	ck.SetPath("/")
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	ck.SetExpire(fasthttp.CookieExpireDelete)
	ctx.Response.Header.SetCookie(&ck)
	return writeJSON(ctx, fasthttp.StatusOK, logoutResponse{Status: "logged_out"})
}

// CreateAdmin creates an account with the admin role, its password hashed
// like any other: cmd/marketd calls it at start for the account "admin".
func (s *Server) CreateAdmin(ctx context.Context, name, pw string) error {
	if !core.ValidName(name) {
		return fmt.Errorf("admin account name %q: %w", name, errors.New("not a valid account name"))
	}
	if !passwordRunesOK(pw) {
		return fmt.Errorf("admin password must be %d-%d characters", minPasswordRunes, maxPasswordRunes)
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return fmt.Errorf("hash admin password: %w", err)
	}
	_, err = s.eng.CreateAccount(ctx, core.NewAccount{Name: name, PasswordHash: hash, Role: core.RoleAdmin})
	return err // the caller says what it was creating
}

package transport

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/password"
)

type passwordChangeRequest struct {
	OldPassword *string `json:"old_password"`
	NewPassword *string `json:"new_password"`
}

// changePassword answers POST /api/auth/password (docs/API.md): the
// session's account gets a new password, and its other sessions end in the
// same durable change. Wrong old passwords are counted by the session, as
// logins are by a device cookie, so that a stolen session cannot guess the
// password at the speed of the server.
func (s *Server) changePassword(ctx *fasthttp.RequestCtx, c *caller, req *passwordChangeRequest) error {
	if req.OldPassword == nil {
		return fieldError("old_password", "is required")
	}
	if err := checkNewPassword("new_password", req.NewPassword); err != nil {
		return err
	}
	if *req.NewPassword == *req.OldPassword {
		return fieldError("new_password", "must differ from old_password")
	}
	a, ok := s.eng.Account(c.account)
	if !ok {
		return core.ErrAccountNotFound
	}
	now := s.now()
	att := password.Attempt{Name: a.Info.Name, Device: "session:" + hex.EncodeToString(c.session[:])}
	if wait, blocked := s.lim.lockout.Check(att, now); blocked {
		return rateLimited(ceilSeconds(wait))
	}
	if err := s.allowPasswordCheck(s.clientAddr(ctx), [16]byte{}, false); err != nil {
		return err
	}
	match, err := s.hasher.Compare(ctx, a.Info.PasswordHash, *req.OldPassword)
	if err != nil {
		return err
	}
	if !match {
		s.lim.lockout.Fail(att, now)
		// As a login's refusal, it rests on the hash compared.
		if err := s.eng.WaitAccountDurable(ctx, c.account); err != nil {
			return err
		}
		return fieldError("old_password", "does not match the account's password")
	}
	s.lim.lockout.Succeed(att)
	hash, err := s.hasher.Hash(ctx, *req.NewPassword)
	if err != nil {
		return err
	}
	if err := s.eng.ChangePassword(ctx, c.account, hash, c.session); err != nil {
		return err
	}
	s.setDeviceCookie(ctx, c.account)
	return writeJSON(ctx, fasthttp.StatusOK, logoutResponse{Status: "password_changed"})
}

// ResetPassword sets the password of the named account and ends all its
// sessions: cmd/marketd calls it at start for the admin account when asked
// to with -reset-admin-password, never on its own.
func (s *Server) ResetPassword(ctx context.Context, name, pw string) error {
	if !passwordRunesOK(pw) {
		return fmt.Errorf("password must be %d-%d characters", minPasswordRunes, maxPasswordRunes)
	}
	a, ok := s.eng.AccountByName(name)
	if !ok {
		return fmt.Errorf("account %q: %w", name, core.ErrAccountNotFound)
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	if err := s.eng.ChangePassword(ctx, a.ID, hash, [32]byte{}); err != nil {
		return fmt.Errorf("store password of %q: %w", name, err)
	}
	return nil
}

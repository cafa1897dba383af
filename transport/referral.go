package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
)

// referralBonus is what applying a referral code credits to each of the
// two accounts (docs/API.md, "POST /api/referral/apply").
var referralBonus = money.Units(100)

type referralCodeJSON struct {
	Code string `json:"code"`
}

func (s *Server) referralCode(ctx *fasthttp.RequestCtx, c *caller) error {
	a, err := s.account(c)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, referralCodeJSON{Code: a.Info.ReferralCode})
}

type applyReferralRequest struct {
	Code *string `json:"code"`
}

type applyReferralJSON struct {
	Code         string       `json:"code"`
	ReferrerID   uuid.UUID    `json:"referrer_id"`
	ReferrerName string       `json:"referrer_name"`
	Bonus        money.Amount `json:"bonus"`
	BalanceAfter money.Amount `json:"balance_after"`
}

func (s *Server) applyReferral(ctx *fasthttp.RequestCtx, c *caller, body *applyReferralRequest) error {
	if body.Code == nil {
		return fieldError("code", "required")
	}
	referrer, err := s.eng.ApplyReferral(ctx, c.account, *body.Code, referralBonus)
	if err != nil {
		return err
	}
	a, err := s.account(c)
	if err != nil {
		return err
	}
	r, _ := s.eng.Account(referrer)
	return writeJSON(ctx, fasthttp.StatusOK, referralAppliedOf(core.ReferralApplied{Referrer: referrer,
		Code: r.Info.ReferralCode, Name: r.Info.Name, Bonus: referralBonus, BalanceAfter: a.Balances[money.KP]}))
}

func referralAppliedOf(r core.ReferralApplied) applyReferralJSON {
	return applyReferralJSON{Code: r.Code, ReferrerID: r.Referrer, ReferrerName: r.Name, Bonus: r.Bonus,
		BalanceAfter: r.BalanceAfter}
}

type referralStatsJSON struct {
	Code          string       `json:"code"`
	ReferredCount int          `json:"referred_count"`
	BonusEarned   money.Amount `json:"bonus_earned"`
	VigEarned     money.Amount `json:"vig_earned"`
}

func (s *Server) referralStats(ctx *fasthttp.RequestCtx, c *caller) error {
	st, ok := s.eng.ReferralStats(c.account)
	if !ok {
		return core.ErrAccountNotFound
	}
	return writeJSON(ctx, fasthttp.StatusOK, referralStatsJSON{Code: st.Code, ReferredCount: st.ReferredCount,
		BonusEarned: st.BonusEarned, VigEarned: st.VigEarned})
}

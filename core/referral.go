package core

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"marketd/core/money"
)

// ApplyReferral makes the owner of a referral code the referrer of an
// account (SetReferrer): codes are matched ignoring case. It returns the
// referrer's ID.
func (e *Engine) ApplyReferral(ctx context.Context, accountID uuid.UUID, code string, bonus money.Amount) (uuid.UUID, error) {
	if len(code) != ReferralCodeLen {
		return uuid.Nil, fieldErr("code", "must be %d characters", ReferralCodeLen)
	}
	referrer, ok := e.st.accountByCode(strings.ToUpper(code))
	if !ok {
		return uuid.Nil, ErrReferralNotFound
	}
	return referrer, e.SetReferrer(ctx, accountID, referrer, bonus)
}

// ReferralStats is what an account earned by referring others.
type ReferralStats struct {
	Code          string
	ReferredCount int
	// BonusEarned is the referral bonus KP credited as referrer (not the
	// one received for applying another's code).
	BonusEarned money.Amount
	// VigEarned is the KP vig paid as referrer.
	VigEarned money.Amount
}

// ReferralStats returns an account's referral statistics.
func (e *Engine) ReferralStats(id uuid.UUID) (ReferralStats, bool) {
	a := e.st.account(id)
	if a == nil {
		return ReferralStats{}, false
	}
	st := ReferralStats{ReferredCount: len(e.st.referees(id))}
	a.mu.Lock()
	st.Code = a.referralCode()
	own := a.info.Referrer
	kp := a.refs().ledger[money.KP].snapshot()
	vig := a.vig()
	a.mu.Unlock()
	// Ledger entries are immutable: read the prefix without the lock. A
	// referrer's entry refers to the referee; the one bonus received as a
	// referee refers to the account's own referrer, which no referee can
	// be (SetReferrer refuses cycles).
	for _, l := range kp.all() {
		if l.Type == TxReferralBonus && (own == uuid.Nil || l.Ref != own) {
			st.BonusEarned = addSigned(st.BonusEarned, l.Amount)
		}
	}
	for _, v := range vig {
		if v.Role == VigReferrer && v.Currency == money.KP {
			st.VigEarned = addSigned(st.VigEarned, v.Paid)
		}
	}
	return st, true
}

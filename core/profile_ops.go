package core

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Limits of the profile's text fields (docs/API.md, "POST
// /api/profile/persona", "POST /api/profile/accept-tos").
const (
	MaxPersonaRunes    = 500
	MaxTOSVersionRunes = 32
)

// SettingsPatch is a change of some of an account's settings: nil fields
// stay as they are.
type SettingsPatch struct {
	Notifications     *bool // false stops new notifications being kept
	ShowOnLeaderboard *bool // false leaves the account off the leaderboard
	Theme             *Theme
}

// UpdateSettings merges p into an account's settings and answers the
// settings after it, once durable. An empty patch is a field error.
func (e *Engine) UpdateSettings(ctx context.Context, id uuid.UUID, p SettingsPatch) (Settings, error) {
	switch {
	case p.Notifications == nil && p.ShowOnLeaderboard == nil && p.Theme == nil:
		return Settings{}, fieldErr("settings", "must change at least one of notifications, show_on_leaderboard, theme")
	case p.Theme != nil && *p.Theme >= NumThemes:
		return Settings{}, fieldErr("theme", "must be system, light or dark")
	}
	info, err := e.changeInfo(ctx, id, func(_ *account, in *AccountInfo) (bool, error) {
		if p.Notifications != nil {
			in.Settings.NotificationsOff = !*p.Notifications
		}
		if p.ShowOnLeaderboard != nil {
			in.Settings.HideFromLeaderboard = !*p.ShowOnLeaderboard
		}
		if p.Theme != nil {
			in.Settings.Theme = *p.Theme
		}
		return true, nil
	})
	return info.Settings, err
}

// SetPersona sets an account's persona text, at most MaxPersonaRunes
// characters ("" clears it).
func (e *Engine) SetPersona(ctx context.Context, id uuid.UUID, persona string) (AccountInfo, error) {
	if utf8.RuneCountInString(persona) > MaxPersonaRunes {
		return AccountInfo{}, fieldErr("persona", "must be at most %d characters", MaxPersonaRunes)
	}
	return e.changeInfo(ctx, id, func(_ *account, in *AccountInfo) (bool, error) {
		in.Persona = persona
		return true, nil
	})
}

// AcceptTOS records that an account accepted a version of the terms of
// service, and when; accepting again records the new time.
func (e *Engine) AcceptTOS(ctx context.Context, id uuid.UUID, version string) (AccountInfo, error) {
	if n := utf8.RuneCountInString(version); n < 1 || n > MaxTOSVersionRunes {
		return AccountInfo{}, fieldErr("version", "must be 1-%d characters", MaxTOSVersionRunes)
	}
	now := e.now()
	return e.changeInfo(ctx, id, func(_ *account, in *AccountInfo) (bool, error) {
		in.TOSVersion, in.TOSAcceptedAt = version, now
		return true, nil
	})
}

// SetTradingMode sets the currency an account's trades, splits and merges use.
// USDC needs a linked wallet (docs/API.md, "POST /api/profile/trading-mode").
// Setting the mode it has logs nothing.
func (e *Engine) SetTradingMode(ctx context.Context, id uuid.UUID, mode money.Currency) (AccountInfo, error) {
	if !mode.Valid() {
		return AccountInfo{}, fieldErr("mode", "must be kp or usdc")
	}
	return e.changeInfo(ctx, id, func(_ *account, in *AccountInfo) (bool, error) {
		if mode == money.USDC && in.Wallet == "" {
			return false, ErrWalletRequired
		}
		changed := in.Mode != mode
		in.Mode = mode
		return changed, nil
	})
}

// TradingMode returns the currency of an account's trades, splits and
// merges: a cheap read for the trade path, which must not copy the whole
// account; it writes no memory (account.tradingMode).
func (e *Engine) TradingMode(id uuid.UUID) (money.Currency, error) {
	a := e.st.account(id)
	if a == nil {
		return 0, ErrAccountNotFound
	}
	return a.tradingMode(), nil
}

// changeInfo logs a new after-image of an account's info (KindProfile):
// edit changes a copy of it, the account locked, and says whether it
// changed anything. Nothing is logged when it did not or when it fails;
// the answer then waits until the account's last change is durable, since
// it rests on it (the wallet a refusal found, the mode already set). It
// answers with the info after the change.
func (e *Engine) changeInfo(ctx context.Context, id uuid.UUID, edit func(a *account, in *AccountInfo) (bool, error)) (AccountInfo, error) {
	if err := e.enter(); err != nil {
		return AccountInfo{}, err
	}
	defer e.leave()
	return e.editInfo(ctx, id, nil, edit)
}

// editInfo is changeInfo for an operation already admitted by enter.
// held, when not nil, is State.custodyMu, which the caller holds;
// editInfo releases it with the account's, so that
// nobody waits on it for a commit.
func (e *Engine) editInfo(ctx context.Context, id uuid.UUID, held *sync.Mutex, edit func(a *account, in *AccountInfo) (bool, error)) (AccountInfo, error) {
	unlockHeld := func() {
		if held != nil {
			held.Unlock()
		}
	}
	a := e.st.account(id)
	if a == nil || id == HouseID {
		unlockHeld()
		return AccountInfo{}, ErrAccountNotFound
	}
	a.mu.Lock()
	info := a.infoOf()
	changed, err := edit(a, &info)
	if err != nil || !changed {
		lsn := a.lsn
		a.mu.Unlock()
		unlockHeld()
		return info, e.refuse(ctx, lsn, err)
	}
	p := &pending{}
	p.rec = Record{Kind: KindProfile, Time: e.now()}
	p.addAccount(a).Info = &info
	p.answer(ctx, info)
	done := make(chan error, 1)
	e.commit(p, done, nil)
	a.mu.Unlock()
	unlockHeld()
	if err := <-done; err != nil {
		return AccountInfo{}, err
	}
	return info, nil
}

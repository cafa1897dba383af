package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestRecoveryRefusesWhatStateCannotHold: an account's state cannot hold a
// position in the nil market (its position table marks an empty slot with
// that ID: positions.go) or a trade whose shares, currency or side do not
// fit a fill (fill.go); storing either is a BUG panic. Recovery validates
// what it reads before applying it: a log record or a snapshot image that
// carries one is refused with an error, the state left as it was, instead
// of panicking start-up. It fails (with that panic) when replay or image
// loading applies the change unchecked.
func TestRecoveryRefusesWhatStateCannotHold(t *testing.T) {
	market := uuid.MustParse("0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a")
	account := uuid.MustParse("5d7a7f0e-8c2b-4c1e-9f3a-6b2d1e0c9a87")
	trade := func(mod func(*TradeSummary)) []TradeSummary {
		t := TradeSummary{ID: uuid.MustParse("7c1e2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"), Market: market,
			Currency: money.KP, Shares: 1, Cost: 1}
		mod(&t)
		return []TradeSummary{t}
	}
	changes := []struct {
		name string
		ch   AccountChange
		want string
	}{
		{"position in the nil market", AccountChange{Positions: []Position{
			{Market: market, Currency: money.KP, Shares: [NumSides]money.Amount{1, 0}},
			{Currency: money.KP, Shares: [NumSides]money.Amount{2, 0}},
		}}, "position in the nil market"},
		{"a trade of 2^56 shares", AccountChange{Trades: trade(func(t *TradeSummary) { t.Shares = 1 << 56 })}, "shares 72057594037927936 out of range"},
		{"a trade of negative shares", AccountChange{Trades: trade(func(t *TradeSummary) { t.Shares = -1 })}, "shares -1 out of range"},
		{"a trade in an unknown currency", AccountChange{Trades: trade(func(t *TradeSummary) { t.Currency = money.NumCurrencies })}, "unknown currency"},
		{"a trade of an unknown side", AccountChange{Trades: trade(func(t *TradeSummary) { t.Side = 2 })}, "unknown side"},
	}
	for _, c := range changes {
		for _, how := range []string{"log record", "snapshot image"} {
			t.Run(c.name+", "+how, func(t *testing.T) {
				s := NewState()
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("panicked: %v", r)
						}
					}()
					ch := c.ch
					if how == "log record" {
						ch.ID = HouseID
						err = s.Apply(5, &Record{Kind: KindTrade, Accounts: []AccountChange{ch}})
						return
					}
					ch.ID, ch.Prev, ch.Info = account, 3, &AccountInfo{Name: "trader"}
					err = s.LoadImage(&Record{Kind: KindImage, Accounts: []AccountChange{ch}})
				}()
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v, want an error containing %q", err, c.want)
				}
				if how == "log record" && !errors.Is(err, ErrCorruptReplay) {
					t.Errorf("got %v, want ErrCorruptReplay", err)
				}
				if a := s.account(HouseID); a.positionCount() != 0 || a.refs().fills.Len() != 0 || a.lsn != 0 {
					t.Errorf("the house changed: %d positions, %d fills, LSN %d", a.positionCount(), a.refs().fills.Len(), a.lsn)
				}
				if a := s.account(account); a != nil {
					t.Errorf("the image's account was added: %d positions", a.positionCount())
				}
			})
		}
	}
}

package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestRecoveryRefusesPositionInNilMarket: no market has the nil ID, and an
// account's position table marks an empty slot with it, so storing such a
// position is a BUG panic (positions.go). Recovery validates what it reads
// before applying it: a log record or a snapshot image that gives an
// account a position in the nil market is refused with an error, the state
// left as it was, instead of panicking start-up. It fails (with that
// panic) when replay or image loading applies the position unchecked.
func TestRecoveryRefusesPositionInNilMarket(t *testing.T) {
	market := uuid.MustParse("0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a")
	account := uuid.MustParse("5d7a7f0e-8c2b-4c1e-9f3a-6b2d1e0c9a87")
	positions := []Position{
		{Market: market, Currency: money.KP, Shares: [NumSides]money.Amount{1, 0}},
		{Currency: money.KP, Shares: [NumSides]money.Amount{2, 0}},
	}
	tests := []struct {
		name  string
		apply func(s *State) error
		want  string
	}{
		{"log record", func(s *State) error {
			return s.Apply(5, &Record{Kind: KindTrade, Accounts: []AccountChange{{ID: HouseID, Positions: positions}}})
		}, "position in the nil market"},
		{"snapshot image", func(s *State) error {
			return s.LoadImage(&Record{Kind: KindImage, Accounts: []AccountChange{{ID: account, Prev: 3,
				Info: &AccountInfo{Name: "trader"}, Positions: positions}}})
		}, "position in the nil market"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s with a position in the nil market panicked: %v", tc.name, r)
					}
				}()
				err = tc.apply(s)
			}()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s with a position in the nil market: got %v, want an error containing %q", tc.name, err, tc.want)
			}
			if tc.name == "log record" && !errors.Is(err, ErrCorruptReplay) {
				t.Errorf("log record: got %v, want ErrCorruptReplay", err)
			}
			if a := s.account(HouseID); a.positionCount() != 0 || a.lsn != 0 {
				t.Errorf("the house changed: %d positions, LSN %d", a.positionCount(), a.lsn)
			}
			if a := s.account(account); a != nil {
				t.Errorf("the image's account was added: %d positions", a.positionCount())
			}
		})
	}
}

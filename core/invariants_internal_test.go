package core

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestConservationMessageNamesEveryPart: a conservation failure shows each
// part of the sum it checks, the oracle bonds included. Before, the message
// gave "balances+collateral" while the total counted the bonds too.
func TestConservationMessageNamesEveryPart(t *testing.T) {
	s := NewState()
	a := s.newAccount(uuid.UUID{1})
	a.balances[money.KP] = money.Units(5)
	a.lsn = 1 // as the change that created it would leave it
	s.addAccount(a)
	err := s.Check()
	if err == nil {
		t.Fatal("5 KP held, none minted: Check passed")
	}
	for _, want := range []string{"conservation kp", "balances 5", "collateral 0", "oracle bonds and stakes 0", "= 5", "minted-burned 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v\nwant it to contain %q", err, want)
		}
	}
}

// TestCheckCountsTheAccountsItWalks: Check walks the accounts' memory,
// not the map that finds them, so it counts them against the map. An
// account findable by ID but never stored by a change (LSN 0) is reported;
// one allocated but never made findable (a creation the journal refused)
// is not an account of the state and is left out.
func TestCheckCountsTheAccountsItWalks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		findable bool
		wantErr  string // "" for none
	}{
		{"findable, LSN 0", true, "2 accounts findable by ID, 1 stored by a change and checked"},
		{"allocated, not findable", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			a := s.newAccount(uuid.UUID{2})
			if tc.findable {
				s.addAccount(a)
			}
			err := s.Check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check: %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Check: %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

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

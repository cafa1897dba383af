package core_test

import (
	"fmt"
	"testing"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal/record"
)

// TestCaptureCutsEveryLongList captures a state whose accounts and market
// hold more transfers, vig payments, positions, ledger entries and votes
// than a piece, and requires every image change to hold at most a piece of
// each list, every image to go through the codec, and the images to load
// back into the same state, the invariants holding.
func TestCaptureCutsEveryLongList(t *testing.T) {
	const piece = 3
	s := newOracleSetupVoters(t, 10)
	h := s.harness
	// Transfers: deposits to the holder.
	h.link(s.holder, walletA)
	for i := range 8 {
		h.deposit(s.holder, 5, txHash(byte(i)))
	}
	// Positions and vig: the holder trades in markets of the admin, who
	// is paid the creator's vig of those that settle.
	for i := range 8 {
		m := h.market(fmt.Sprintf("side %d", i), 0, 100)
		if _, err := h.buy(s.holder, m, core.Side(i%2), money.Units(3)); err != nil {
			t.Fatal(err)
		}
		if i < 5 {
			if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: m, Outcome: core.Yes}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Votes on the challenged proposal of the setup's market.
	s.propose(core.Yes)
	s.challenge()
	for i, v := range s.more {
		s.vote(v, core.Side(i%2))
	}
	h.check()
	var most [5]int // transfers, vig, positions, ledger, votes
	whole := h.e.State().Canonical()
	for _, a := range whole.Accounts {
		most[0], most[1] = max(most[0], len(a.Transfers)), max(most[1], len(a.Vig))
		most[2], most[3] = max(most[2], len(a.Positions)), max(most[3], len(a.Ledger))
	}
	for _, m := range whole.Markets {
		most[4] = max(most[4], len(m.Votes))
	}
	for i, n := range most {
		if n <= piece {
			t.Fatalf("list %d: longest %d, not over the piece %d", i, n, piece)
		}
	}

	st := core.NewState()
	chunks := 0
	_, err := core.CapturePieces(h.e.State(), 1000, piece, func(r *core.Record) error {
		chunks++
		for _, a := range r.Accounts {
			if n := max(len(a.Ledger), len(a.Positions), len(a.Vig), len(a.Transfers)); n > piece {
				t.Errorf("chunk %d: account %s change with a list of %d, piece %d", chunks, a.ID, n, piece)
			}
		}
		for _, m := range r.Markets {
			if len(m.Votes) > piece {
				t.Errorf("chunk %d: market %s change with %d votes, piece %d", chunks, m.ID, len(m.Votes), piece)
			}
		}
		back, err := record.Decode(record.Append(nil, r))
		if err != nil {
			return err
		}
		return st.LoadImage(back)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil {
		t.Fatalf("loaded images: %v", err)
	}
	requireEqual(t, st, h.e.State())
}

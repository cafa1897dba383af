package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

func TestApplyReferral(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	bob := h.account("bob", core.RoleSpeculator, 0)
	carol := h.account("carol", core.RoleSpeculator, 0)
	codeOf := func(id uuid.UUID) string {
		v, _ := h.e.Account(id)
		return v.Info.ReferralCode
	}
	if c := codeOf(alice); len(c) != core.ReferralCodeLen || c == codeOf(bob) {
		t.Fatalf("codes %q and %q", c, codeOf(bob))
	}
	bonus := money.Units(100)
	tests := []struct {
		name    string
		account uuid.UUID
		code    string
		want    error
	}{
		{"short code", bob, "ABC", &core.FieldError{}},
		{"unknown code", bob, "ZZZZZZZZ", core.ErrReferralNotFound},
		{"own code", alice, codeOf(alice), core.ErrSelfReferral},
		{"lower-case code", bob, strings.ToLower(codeOf(alice)), nil},
		{"second referral", bob, codeOf(carol), core.ErrReferrerSet},
		{"cycle", alice, codeOf(bob), core.ErrReferralCycle},
		{"another referee", carol, codeOf(alice), nil},
	}
	for _, tc := range tests {
		before := h.balance(tc.account, money.KP)
		ref, err := h.e.ApplyReferral(h.ctx, tc.account, tc.code, bonus)
		var fe *core.FieldError
		switch {
		case tc.want == nil && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case tc.want == nil:
			if ref != alice || h.balance(tc.account, money.KP) != before+bonus {
				t.Fatalf("%s: referrer %s, balance %s from %s", tc.name, ref, h.balance(tc.account, money.KP), before)
			}
		case errors.As(tc.want, &fe):
			if !errors.As(err, &fe) || fe.Field != "code" {
				t.Fatalf("%s: err %v, want a field error on code", tc.name, err)
			}
		case !errors.Is(err, tc.want):
			t.Fatalf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if tc.want != nil && h.balance(tc.account, money.KP) != before {
			t.Fatalf("%s: refused but the balance moved", tc.name)
		}
	}
	st, _ := h.e.ReferralStats(alice)
	if st.Code != codeOf(alice) || st.ReferredCount != 2 || st.BonusEarned != 2*bonus || st.VigEarned != 0 {
		t.Fatalf("alice's stats %+v", st)
	}
	// Bob earned nothing as a referrer: his bonus came from applying.
	if st, _ := h.e.ReferralStats(bob); st.ReferredCount != 0 || st.BonusEarned != 0 {
		t.Fatalf("bob's stats %+v", st)
	}
	pg, _ := h.e.Notes(alice, false, 10)
	if len(pg.Notes) != 2 || pg.Notes[0].Kind != core.NoteReferralApplied || pg.Notes[0].Ref != carol || pg.Notes[1].Ref != bob {
		t.Fatalf("alice's notes %+v", pg.Notes)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

// vigScenario has a referred trader buy yes five times in a new market of
// the harness's admin; it returns the referrer, the trader, the market and
// the vig of the trades.
func (h *harness) vigScenario() (ref, trader, mkt uuid.UUID, vig money.Amount) {
	h.t.Helper()
	ref = h.account("referrer", core.RoleSpeculator, 0)
	trader = h.account("loser", core.RoleSpeculator, 10000)
	if err := h.e.SetReferrer(h.ctx, trader, ref, 0); err != nil {
		h.t.Fatal(err)
	}
	mkt = h.market("m", 0, 1000)
	for range 5 {
		r, err := h.buy(trader, mkt, core.Yes, money.Units(200))
		if err != nil {
			h.t.Fatal(err)
		}
		vig += r.Vig
	}
	return ref, trader, mkt, vig
}

func TestVigReport(t *testing.T) {
	h := newHarness(t)
	ref, _, mkt, vig := h.vigScenario()
	// Before settlement: accrued, nothing paid.
	cr, _ := h.e.VigReport(h.admin, money.KP)
	rr, _ := h.e.VigReport(ref, money.KP)
	if len(cr.Entries) != 1 || cr.Entries[0].Settled || cr.Entries[0].Role != core.VigCreator || cr.Paid != 0 || cr.Accrued != cr.Entries[0].Accrued {
		t.Fatalf("creator before settlement: %+v", cr)
	}
	if len(rr.Entries) != 1 || rr.Entries[0].Role != core.VigReferrer || rr.Accrued == 0 || rr.Paid != 0 {
		t.Fatalf("referrer before settlement: %+v", rr)
	}
	if sum := cr.Accrued + rr.Accrued; sum > vig/2 || sum < vig/2-10 { // each accrual rounds down
		t.Fatalf("accrued %s + %s, want half of %s", cr.Accrued, rr.Accrued, vig)
	}
	accrued := rr.Accrued
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.No}); err != nil {
		t.Fatal(err)
	}
	rr, _ = h.e.VigReport(ref, money.KP)
	if len(rr.Entries) != 1 || !rr.Entries[0].Settled || rr.Entries[0].Accrued != accrued || rr.Accrued != 0 ||
		rr.Paid != h.balance(ref, money.KP) || rr.FromReferrals != rr.Paid || rr.FromMarkets != 0 {
		t.Fatalf("referrer after settlement: %+v, balance %s", rr, h.balance(ref, money.KP))
	}
	if st, _ := h.e.ReferralStats(ref); st.VigEarned != rr.Paid {
		t.Fatalf("referral stats vig %s, report %s", st.VigEarned, rr.Paid)
	}
	if u, _ := h.e.VigReport(ref, money.USDC); len(u.Entries) != 0 || u.Paid != 0 {
		t.Fatalf("usdc report %+v", u)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

func TestNotifications(t *testing.T) {
	h := newHarness(t)
	bob := h.account("bob", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0, 1000)
	if _, err := h.buy(bob, mkt, core.Yes, money.Units(10)); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(30 * 24 * time.Hour)
	if n, err := h.e.CloseDue(h.ctx); err != nil || n != 1 {
		t.Fatalf("CloseDue = %d, %v", n, err)
	}
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.Yes}); err != nil {
		t.Fatal(err)
	}
	pg, _ := h.e.Notes(bob, false, 10)
	if pg.Matched != 2 || pg.Unread != 2 || pg.Notes[0].Kind != core.NoteMarketSettled || pg.Notes[1].Kind != core.NoteMarketClosed ||
		pg.Notes[0].Amount != money.Units(10) || pg.Notes[0].ID != 2 || pg.Notes[1].ID != 1 {
		t.Fatalf("bob's notes %+v", pg)
	}
	tests := []struct {
		name    string
		ids     []uint64
		all     bool
		updated int
		unread  int
		err     bool
	}{
		{"no ids", nil, false, 0, 2, true},
		{"unknown id", []uint64{99}, false, 0, 2, false},
		{"one, twice", []uint64{1, 1}, false, 1, 1, false},
		{"again", []uint64{1}, false, 0, 1, false},
		{"all", nil, true, 1, 0, false},
		{"all again", nil, true, 0, 0, false},
	}
	for _, tc := range tests {
		n, err := h.e.MarkNotesRead(h.ctx, bob, tc.ids, tc.all)
		pg, _ := h.e.Notes(bob, true, 10)
		if (err != nil) != tc.err || n != tc.updated || pg.Unread != tc.unread || pg.Matched != tc.unread {
			t.Fatalf("%s: updated %d, %v; unread %d, matched %d", tc.name, n, err, pg.Unread, pg.Matched)
		}
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

// An account keeps its newest MaxNotes notifications; the IDs go on
// rising past the dropped ones, replay included.
func TestNotificationsCapped(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	n := core.MaxNotes + 5
	for i := range n {
		b := h.account("b"+strings.Repeat("x", 2)+string(rune('a'+i%26))+uuid.NewString()[:8], core.RoleSpeculator, 0)
		if err := h.e.SetReferrer(h.ctx, b, alice, 0); err != nil {
			t.Fatal(err)
		}
	}
	pg, _ := h.e.Notes(alice, false, core.MaxNotes+10)
	if pg.Matched != core.MaxNotes || pg.Notes[0].ID != uint64(n) || pg.Notes[len(pg.Notes)-1].ID != 6 {
		t.Fatalf("kept %d, newest %d, oldest %d", pg.Matched, pg.Notes[0].ID, pg.Notes[len(pg.Notes)-1].ID)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

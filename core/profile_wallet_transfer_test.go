package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// Addresses of EIP-55's reference vectors.
const (
	walletA = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	walletB = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
)

// txHash returns a distinct, valid transaction hash for n.
func txHash(n byte) string { return "0x" + strings.Repeat(string("0123456789abcdef"[n%16]), 64) }

// custodyHarness is a harness whose engine runs the record custody mode
// with a recording custody the test can inspect.
func custodyHarness(t *testing.T) (*harness, *core.RecordingCustody) {
	t.Helper()
	rc := core.NewRecordingCustody()
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, CustodyMode: core.CustodyModeRecord, Custody: rc})
	return h, rc
}

func (h *harness) link(acct uuid.UUID, addr string) {
	h.t.Helper()
	if _, err := h.e.LinkWallet(h.ctx, acct, addr); err != nil {
		h.t.Fatalf("link %s: %v", addr, err)
	}
}

// deposit deposits units of USDC to acct and, in the manual custody mode,
// has the admin confirm the amount, so that it is credited either way.
func (h *harness) deposit(acct uuid.UUID, units int64, hash string) core.TransferResult {
	h.t.Helper()
	r, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: acct, Amount: money.Units(units), TxHash: hash})
	if err != nil {
		h.t.Fatalf("deposit %d %s: %v", units, hash, err)
	}
	if r.Transfer.Status == core.TransferPending {
		at, bal, err := h.e.ConfirmDeposit(h.ctx, core.TransferDecision{Admin: h.admin, Transfer: r.Transfer.ID, Amount: r.Transfer.Amount})
		if err != nil {
			h.t.Fatalf("confirm deposit %d %s: %v", units, hash, err)
		}
		r.Transfer, r.USDCBalance = at.Transfer, bal
	}
	return r
}

// notes returns an account's kept notifications, from a whole-state image.
func (h *harness) notes(acct uuid.UUID) []core.Note {
	for _, ch := range h.e.State().Canonical().Accounts {
		if ch.ID == acct {
			return ch.Notes
		}
	}
	h.t.Fatalf("account %s not in the image", acct)
	return nil
}

// requireField fails unless err is a field error on field.
func requireField(t *testing.T, err error, field string) {
	t.Helper()
	var fe *core.FieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Fatalf("error %v, want a field error on %q", err, field)
	}
}

func TestSettingsPersonaTOS(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 10)
	if v, _ := h.e.Account(alice); v.Info.Settings != (core.Settings{}) {
		t.Fatalf("new account's settings %+v, want the defaults", v.Info.Settings)
	}
	f, tr := false, true
	dark := core.ThemeDark
	got, err := h.e.UpdateSettings(h.ctx, alice, core.SettingsPatch{Notifications: &f, Theme: &dark})
	want := core.Settings{NotificationsOff: true, Theme: core.ThemeDark}
	if err != nil || got != want {
		t.Fatalf("UpdateSettings = %+v, %v; want %+v", got, err, want)
	}
	// A merge: what the patch leaves out stays.
	got, err = h.e.UpdateSettings(h.ctx, alice, core.SettingsPatch{ShowOnLeaderboard: &f, Notifications: &tr})
	want = core.Settings{HideFromLeaderboard: true, Theme: core.ThemeDark}
	if err != nil || got != want {
		t.Fatalf("UpdateSettings = %+v, %v; want %+v", got, err, want)
	}
	persona := strings.Repeat("é", core.MaxPersonaRunes)
	if info, err := h.e.SetPersona(h.ctx, alice, persona); err != nil || info.Persona != persona {
		t.Fatalf("SetPersona = %q, %v", info.Persona, err)
	}
	info, err := h.e.AcceptTOS(h.ctx, alice, "2026-11")
	if err != nil || info.TOSVersion != "2026-11" || info.TOSAcceptedAt == 0 {
		t.Fatalf("AcceptTOS = %+v, %v", info, err)
	}
	before := h.e.State().Canonical()
	bad := core.Theme(core.NumThemes)
	errCases := []struct {
		name  string
		call  func() error
		field string
		want  error
	}{
		{"empty patch", func() error { _, err := h.e.UpdateSettings(h.ctx, alice, core.SettingsPatch{}); return err }, "settings", nil},
		{"unknown theme", func() error {
			_, err := h.e.UpdateSettings(h.ctx, alice, core.SettingsPatch{Theme: &bad})
			return err
		}, "theme", nil},
		{"long persona", func() error { _, err := h.e.SetPersona(h.ctx, alice, persona+"x"); return err }, "persona", nil},
		{"empty tos version", func() error { _, err := h.e.AcceptTOS(h.ctx, alice, ""); return err }, "version", nil},
		{"long tos version", func() error { _, err := h.e.AcceptTOS(h.ctx, alice, strings.Repeat("v", 33)); return err }, "version", nil},
		{"unknown mode", func() error { _, err := h.e.SetTradingMode(h.ctx, alice, 7); return err }, "mode", nil},
		{"usdc without wallet", func() error { _, err := h.e.SetTradingMode(h.ctx, alice, money.USDC); return err }, "", core.ErrWalletRequired},
		{"unknown account", func() error { _, err := h.e.SetPersona(h.ctx, uuid.New(), ""); return err }, "", core.ErrAccountNotFound},
		{"house", func() error { _, err := h.e.AcceptTOS(h.ctx, core.HouseID, "v"); return err }, "", core.ErrAccountNotFound},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.field != "" {
				requireField(t, err, tc.field)
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	requireEqualRecords(t, h.e.State().Canonical(), before)
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

func TestSettingsSilenceNotesAndHideFromLeaderboard(t *testing.T) {
	h, _ := custodyHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 100)
	bob := h.account("bob", core.RoleSpeculator, 100)
	mkt := h.market("m", 0, 100)
	for _, a := range []uuid.UUID{alice, bob} {
		if _, err := h.buy(a, mkt, core.Yes, money.Units(1)); err != nil {
			t.Fatal(err)
		}
	}
	f := false
	if _, err := h.e.UpdateSettings(h.ctx, alice, core.SettingsPatch{Notifications: &f, ShowOnLeaderboard: &f}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(core.LeaderboardMaxAge)
	total, leaders := h.e.Leaderboard(10)
	// The admin never traded and alice asked to be hidden: bob alone.
	if total != 1 || len(leaders) != 1 || leaders[0].Account != bob {
		t.Fatalf("leaderboard %d %+v, want bob alone", total, leaders)
	}
	h.link(alice, walletA)
	h.link(bob, walletB)
	h.deposit(alice, 5, txHash(1))
	h.deposit(bob, 5, txHash(2))
	if n := h.notes(alice); len(n) != 0 {
		t.Fatalf("alice turned notifications off but kept %+v", n)
	}
	if n := h.notes(bob); len(n) != 1 || n[0].Kind != core.NoteDepositCredited || n[0].Amount != money.Units(5) {
		t.Fatalf("bob's notes %+v, want one deposit_credited of 5", n)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

func TestWalletLinkUnlink(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 10)
	bob := h.account("bob", core.RoleSpeculator, 10)
	// Lower case is accepted unchecked and stored in checksum form.
	info, err := h.e.LinkWallet(h.ctx, alice, strings.ToLower(walletA))
	if err != nil || info.Wallet != walletA {
		t.Fatalf("LinkWallet = %q, %v; want %q", info.Wallet, err, walletA)
	}
	lsn := h.j.Contiguous()
	// The same address again, in another case: answered, nothing logged.
	if info, err := h.e.LinkWallet(h.ctx, alice, "0x"+strings.ToUpper(walletA[2:])); err != nil || info.Wallet != walletA {
		t.Fatalf("LinkWallet again = %q, %v", info.Wallet, err)
	}
	if got := h.j.Contiguous(); got != lsn {
		t.Fatalf("repeated link logged %d records", got-lsn)
	}
	cases := []struct {
		name  string
		acct  uuid.UUID
		addr  string
		field string
		want  error
	}{
		{"malformed", bob, "0x123", "address", nil},
		{"not hex", bob, "0x" + strings.Repeat("g", 40), "address", nil},
		{"bad checksum", bob, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "address", nil},
		{"another wallet already linked", alice, walletB, "", core.ErrWalletLinked},
		{"linked to another account", bob, walletA, "", core.ErrWalletTaken},
		{"unknown account", uuid.New(), walletB, "", core.ErrAccountNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.e.LinkWallet(h.ctx, tc.acct, tc.addr)
			if tc.field != "" {
				requireField(t, err, tc.field)
				if tc.name == "bad checksum" && !strings.Contains(err.Error(), "invalid EIP-55 checksum") {
					t.Fatalf("error %v, want the checksum named", err)
				}
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("LinkWallet(%s) = %v, want %v", tc.addr, err, tc.want)
			}
		})
	}
	if _, err := h.e.UnlinkWallet(h.ctx, bob); !errors.Is(err, core.ErrNoWallet) {
		t.Fatalf("unlink without wallet = %v", err)
	}
	if _, err := h.e.SetTradingMode(h.ctx, alice, money.USDC); err != nil {
		t.Fatal(err)
	}
	info, err = h.e.UnlinkWallet(h.ctx, alice)
	if err != nil || info.Wallet != "" || info.Mode != money.KP {
		t.Fatalf("UnlinkWallet = %+v, %v; want no wallet, mode kp", info, err)
	}
	// Once unlinked, the address is free for another account.
	h.link(bob, walletA)
	// An account with a wallet is told so first, not who holds the address.
	h.link(alice, walletB)
	if _, err := h.e.LinkWallet(h.ctx, alice, walletA); !errors.Is(err, core.ErrWalletLinked) {
		t.Fatalf("link of another's address by an account with a wallet = %v, want ErrWalletLinked", err)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

func TestDepositTradeWithdraw(t *testing.T) {
	h, rc := custodyHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 10)
	bob := h.account("bob", core.RoleSpeculator, 10)
	mkt := h.market("m", 0, 100)
	if _, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: alice, Amount: 1, TxHash: txHash(1)}); !errors.Is(err, core.ErrWalletRequired) {
		t.Fatalf("deposit without wallet = %v", err)
	}
	h.link(alice, walletA)
	h.link(bob, walletB)
	upper := "0x" + strings.ToUpper(txHash(10)[2:])
	first := h.deposit(alice, 50, upper)
	if first.Repeat || first.USDCBalance != money.Units(50) || first.Transfer.TxHash != txHash(10) ||
		first.Transfer.Status != core.TransferCredited || first.Transfer.Wallet != walletA {
		t.Fatalf("deposit = %+v", first)
	}
	lsn := h.j.Contiguous()
	again := h.deposit(alice, 70, txHash(10))
	if !again.Repeat || again.Transfer != first.Transfer || again.USDCBalance != money.Units(50) || h.j.Contiguous() != lsn {
		t.Fatalf("repeat = %+v (log %d -> %d), want the first deposit and nothing logged", again, lsn, h.j.Contiguous())
	}
	if len(rc.Deposits()) != 1 || rc.Deposits()[0].Transfer != first.Transfer {
		t.Fatalf("custody saw deposits %+v", rc.Deposits())
	}

	// Trading in USDC takes the USDC balance and opens the market's USDC book.
	if _, err := h.e.SetTradingMode(h.ctx, alice, money.USDC); err != nil {
		t.Fatal(err)
	}
	if mode, err := h.e.TradingMode(alice); err != nil || mode != money.USDC {
		t.Fatalf("TradingMode = %v, %v", mode, err)
	}
	// A trade in the account's mode (the transport's) finds it USDC.
	tr, err := h.e.Trade(h.ctx, core.TradeRequest{Account: alice, Market: mkt, TradingMode: true, Side: core.Yes, Shares: money.Units(10)})
	if err != nil || tr.Currency != money.USDC || tr.BalanceAfter != money.Units(50)-tr.Cost || h.balance(alice, money.KP) != money.Units(10) {
		t.Fatalf("USDC trade = %+v, %v", tr, err)
	}
	if _, err := h.e.UnlinkWallet(h.ctx, alice); !errors.Is(err, core.ErrUSDCHeld) {
		t.Fatalf("unlink with USDC held = %v", err)
	}
	if _, err := h.e.Trade(h.ctx, core.TradeRequest{Account: alice, Market: mkt, Currency: money.USDC, Side: core.Yes, Shares: money.Units(10), Sell: true}); err != nil {
		t.Fatal(err)
	}
	bal := h.balance(alice, money.USDC)
	minted, burned := h.e.Supply()
	cases := []struct {
		name   string
		acct   uuid.UUID
		amount money.Amount
		hash   string
		field  string
		want   error
	}{
		{"zero", alice, 0, txHash(3), "amount", nil},
		{"negative", alice, -1, txHash(3), "amount", nil},
		{"over 1e9", alice, core.MaxAmount + 1, txHash(3), "amount", nil},
		{"short hash", alice, 1, "0x1234", "tx_hash", nil},
		{"hash without 0x", alice, 1, strings.Repeat("a", 66), "tx_hash", nil},
		{"hash not hex", alice, 1, "0x" + strings.Repeat("z", 64), "tx_hash", nil},
		{"credited to another account", bob, 1, txHash(10), "", core.ErrTxCredited},
		{"unknown account", uuid.New(), 1, txHash(3), "", core.ErrAccountNotFound},
	}
	for _, tc := range cases {
		t.Run("deposit "+tc.name, func(t *testing.T) {
			_, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: tc.acct, Amount: tc.amount, TxHash: tc.hash})
			if tc.field != "" {
				requireField(t, err, tc.field)
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	wcases := []struct {
		name   string
		acct   uuid.UUID
		amount money.Amount
		field  string
		want   error
	}{
		{"zero", alice, 0, "amount", nil},
		{"over 1e9", alice, core.MaxAmount + 1, "amount", nil},
		{"more than the balance", alice, bal + 1, "", core.ErrInsufficientBalance},
		{"no wallet", h.admin, 1, "", core.ErrWalletRequired},
		{"unknown account", uuid.New(), 1, "", core.ErrAccountNotFound},
	}
	for _, tc := range wcases {
		t.Run("withdraw "+tc.name, func(t *testing.T) {
			_, err := h.e.Withdraw(h.ctx, tc.acct, tc.amount)
			if tc.field != "" {
				requireField(t, err, tc.field)
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	if m, b := h.e.Supply(); m != minted || b != burned || h.balance(alice, money.USDC) != bal {
		t.Fatal("a refused deposit or withdrawal changed the supply or the balance")
	}

	w, err := h.e.Withdraw(h.ctx, alice, bal)
	if err != nil || w.USDCBalance != 0 || w.Transfer.Status != core.TransferSent || w.Transfer.Wallet != walletA || w.Transfer.Amount != bal {
		t.Fatalf("Withdraw = %+v, %v", w, err)
	}
	if ws := rc.Withdrawals(); len(ws) != 1 || ws[0].Transfer != w.Transfer || ws[0].Account != alice {
		t.Fatalf("custody saw withdrawals %+v", ws)
	}
	if _, burnedNow := h.e.Supply(); burnedNow[money.USDC] != bal {
		t.Fatalf("burned %s, want %s", burnedNow[money.USDC], bal)
	}
	ws, n, _ := h.e.Transfers(alice, core.TransferWithdrawal, 10)
	ds, nd, _ := h.e.Transfers(alice, core.TransferDeposit, 10)
	if n != 1 || ws[0] != w.Transfer || nd != 1 || ds[0] != first.Transfer {
		t.Fatalf("Transfers = %+v (%d), %+v (%d)", ws, n, ds, nd)
	}
	entries, total, _ := h.e.Ledger(alice, money.USDC, 0, 100)
	if total != 4 || entries[0].Type != core.TxWithdrawal || entries[0].Amount != -bal || entries[3].Type != core.TxDeposit {
		t.Fatalf("USDC ledger %+v", entries)
	}
	notes := h.notes(alice)
	if len(notes) != 2 || notes[0].Kind != core.NoteDepositCredited || notes[1].Kind != core.NoteWithdrawalSent {
		t.Fatalf("notes %+v", notes)
	}
	// The market's USDC position is sold off: the wallet may go.
	if _, err := h.e.UnlinkWallet(h.ctx, alice); err != nil {
		t.Fatalf("unlink with nothing held: %v", err)
	}
	h.check()
	replayed := h.replayed()
	requireEqual(t, replayed, h.e.State())
	if err := replayed.Check(); err != nil {
		t.Fatal(err)
	}

	// The withdrawal was sent when made: a restart hands out nothing again
	// (before the custody modes, every start handed out every withdrawal
	// ever made, since none was ever marked sent).
	rc2 := core.NewRecordingCustody()
	e2 := core.NewEngine(replayed, memjournal.New(), core.Config{CloseInterval: -1, UsageFlushInterval: -1,
		CustodyMode: core.CustodyModeRecord, Custody: rc2})
	defer e2.Close()
	if ws := rc2.Withdrawals(); len(ws) != 0 {
		t.Fatalf("withdrawals handed out again at start: %+v", ws)
	}
}

// refusingCustody refuses every deposit.
type refusingCustody struct{ core.RecordingCustody }

func (*refusingCustody) ConfirmDeposit(context.Context, uuid.UUID, core.Transfer) error {
	return core.ErrDepositRejected
}

func TestDepositRefusedByCustody(t *testing.T) {
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, CustodyMode: core.CustodyModeRecord, Custody: &refusingCustody{}})
	alice := h.account("alice", core.RoleSpeculator, 0)
	h.link(alice, walletA)
	before := h.e.State().Canonical()
	_, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: alice, Amount: 1, TxHash: txHash(1)})
	if !errors.Is(err, core.ErrDepositRejected) {
		t.Fatalf("deposit = %v, want ErrDepositRejected", err)
	}
	requireEqualRecords(t, h.e.State().Canonical(), before)
	h.check()
}

// TestConcurrentDepositsOfOneTx credits a transaction raced by two
// accounts and by one account twice exactly once.
func TestConcurrentDepositsOfOneTx(t *testing.T) {
	h, _ := custodyHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	bob := h.account("bob", core.RoleSpeculator, 0)
	h.link(alice, walletA)
	h.link(bob, walletB)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		acct := alice
		if i%2 == 1 {
			acct = bob
		}
		go func() {
			_, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: acct, Amount: money.Units(3), TxHash: txHash(5)})
			errs <- err
		}()
	}
	refused := 0
	for range n {
		if err := <-errs; errors.Is(err, core.ErrTxCredited) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	total := h.balance(alice, money.USDC) + h.balance(bob, money.USDC)
	if total != money.Units(3) || refused != n/2 {
		t.Fatalf("credited %s in all, %d refused; want 3 once and %d refused", total, refused, n/2)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

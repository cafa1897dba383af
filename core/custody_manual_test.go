package core_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestManualCustodyMintsNothingUnconfirmed is the attack of docs/API.md,
// "Custody": register, link any wallet, deposit 1e9 USDC, withdraw it. In
// the manual mode (the default) the deposit waits for an admin and
// nothing is credited or minted; before custody modes it was credited at
// once.
func TestManualCustodyMintsNothingUnconfirmed(t *testing.T) {
	h := newHarness(t)
	mallory := h.account("mallory", core.RoleSpeculator, 0)
	h.link(mallory, walletA)
	r, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: mallory, Amount: core.MaxAmount, TxHash: txHash(1)})
	if err != nil {
		t.Fatal(err)
	}
	minted, _ := h.e.Supply()
	if r.Transfer.Status.String() != "pending" || r.USDCBalance != 0 || h.balance(mallory, money.USDC) != 0 || minted[money.USDC] != 0 {
		t.Fatalf("deposit of 1e9 with no operator: %+v, balance %s, minted %s; want pending and nothing credited",
			r, h.balance(mallory, money.USDC), minted[money.USDC])
	}
	if _, err := h.e.Withdraw(h.ctx, mallory, core.MaxAmount); !errors.Is(err, core.ErrInsufficientBalance) {
		t.Fatalf("withdraw of the unconfirmed deposit: %v, want ErrInsufficientBalance", err)
	}
	h.check()
}

// TestManualCustodyDecisions walks each decision and its refusals.
func TestManualCustodyDecisions(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	bob := h.account("bob", core.RoleSpeculator, 0)
	h.link(alice, walletA)
	h.link(bob, walletB)
	dep := func(acct uuid.UUID, units int64, n byte) core.Transfer {
		t.Helper()
		r, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: acct, Amount: money.Units(units), TxHash: txHash(n)})
		if err != nil || r.Transfer.Status != core.TransferPending {
			t.Fatalf("deposit: %+v, %v", r, err)
		}
		return r.Transfer
	}
	decide := func(what string, fn func(core.TransferDecision) (core.AccountTransfer, money.Amount, error), d core.TransferDecision, want error) core.AccountTransfer {
		t.Helper()
		d.Admin = h.admin
		r, _, err := fn(d)
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
		h.check()
		return r
	}
	confirm := func(d core.TransferDecision) (core.AccountTransfer, money.Amount, error) {
		return h.e.ConfirmDeposit(h.ctx, d)
	}
	reject := func(d core.TransferDecision) (core.AccountTransfer, money.Amount, error) {
		return h.e.RejectDeposit(h.ctx, d)
	}
	sent := func(d core.TransferDecision) (core.AccountTransfer, money.Amount, error) {
		return h.e.MarkWithdrawalSent(h.ctx, d)
	}
	failed := func(d core.TransferDecision) (core.AccountTransfer, money.Amount, error) {
		return h.e.MarkWithdrawalFailed(h.ctx, d)
	}

	// Confirmed with the amount seen on the chain, less than claimed.
	d1 := dep(alice, 100, 1)
	r := decide("confirm", confirm, core.TransferDecision{Transfer: d1.ID, Amount: money.Units(90)}, nil)
	if r.Transfer.Status != core.TransferCredited || r.Transfer.Amount != money.Units(90) || r.Transfer.Claimed != money.Units(100) ||
		r.Transfer.ResolvedBy != h.admin || h.balance(alice, money.USDC) != money.Units(90) {
		t.Fatalf("confirmed %+v, balance %s", r, h.balance(alice, money.USDC))
	}
	decide("confirm again", confirm, core.TransferDecision{Transfer: d1.ID, Amount: 1}, core.ErrTransferFinal)
	decide("reject a confirmed one", reject, core.TransferDecision{Transfer: d1.ID}, core.ErrTransferFinal)
	decide("confirm unknown", confirm, core.TransferDecision{Transfer: uuid.New(), Amount: 1}, core.ErrTransferNotFound)
	decide("send a deposit", sent, core.TransferDecision{Transfer: d1.ID, ChainTx: txHash(9)}, core.ErrTransferNotFound)

	// A rejection credits nothing and frees the transaction, for anyone.
	d2 := dep(alice, 50, 2)
	if _, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: bob, Amount: 1, TxHash: txHash(2)}); !errors.Is(err, core.ErrTxCredited) {
		t.Fatalf("bob deposits alice's pending transaction: %v", err)
	}
	decide("reject", reject, core.TransferDecision{Transfer: d2.ID}, nil)
	d3 := dep(bob, 50, 2)
	decide("confirm bob's", confirm, core.TransferDecision{Transfer: d3.ID, Amount: money.Units(50)}, nil)
	if h.balance(alice, money.USDC) != money.Units(90) || h.balance(bob, money.USDC) != money.Units(50) {
		t.Fatal("a rejection moved money")
	}

	// Withdrawals: queued, then sent (final) or failed (refunded).
	w1, err := h.e.Withdraw(h.ctx, alice, money.Units(30))
	if err != nil || w1.Transfer.Status != core.TransferQueued || w1.USDCBalance != money.Units(60) {
		t.Fatalf("withdraw: %+v, %v", w1, err)
	}
	if _, err := h.e.UnlinkWallet(h.ctx, alice); !errors.Is(err, core.ErrTransfersOpen) && !errors.Is(err, core.ErrUSDCHeld) {
		t.Fatalf("unlink with a queued withdrawal: %v", err)
	}
	_, _, err = h.e.MarkWithdrawalSent(h.ctx, core.TransferDecision{Admin: h.admin, Transfer: w1.Transfer.ID, ChainTx: "0x12"})
	requireField(t, err, "tx_hash")
	r = decide("sent", sent, core.TransferDecision{Transfer: w1.Transfer.ID, ChainTx: txHash(7)}, nil)
	if r.Transfer.Status != core.TransferSent || r.Transfer.ChainTx != txHash(7) {
		t.Fatalf("sent %+v", r)
	}
	decide("failed after sent", failed, core.TransferDecision{Transfer: w1.Transfer.ID}, core.ErrTransferFinal)
	w2, err := h.e.Withdraw(h.ctx, alice, money.Units(60))
	if err != nil {
		t.Fatal(err)
	}
	_, burnedBefore := h.e.Supply()
	r = decide("failed", failed, core.TransferDecision{Transfer: w2.Transfer.ID}, nil)
	_, burnedAfter := h.e.Supply()
	minted, _ := h.e.Supply()
	if r.Transfer.Status != core.TransferFailed || h.balance(alice, money.USDC) != money.Units(60) ||
		burnedAfter != burnedBefore || minted[money.USDC] != money.Units(140+60) {
		t.Fatalf("failed %+v: balance %s, minted %s", r, h.balance(alice, money.USDC), minted[money.USDC])
	}
	entries, _, _ := h.e.Ledger(alice, money.USDC, 0, 1)
	if entries[0].Type != core.TxWithdrawalRefund || entries[0].Amount != money.Units(60) {
		t.Fatalf("refund entry %+v", entries[0])
	}
	// An account may hold MaxPendingDeposits pending deposits.
	for i := range core.MaxPendingDeposits {
		dep(bob, 1, byte(20+i))
	}
	if _, err := h.e.Deposit(h.ctx, core.DepositRequest{Account: bob, Amount: 1, TxHash: "0x" + fmt.Sprintf("%064x", 99)}); !errors.Is(err, core.ErrTooManyOpenTransfers) {
		t.Fatalf("deposit past the bound: %v", err)
	}
	if ds, n := h.e.OpenTransfers(core.TransferDeposit, 100, 0); n != core.MaxPendingDeposits || len(ds) != n || ds[0].Account != bob {
		t.Fatalf("open deposits %d %+v", n, ds)
	}
	requireEqual(t, h.replayed(), h.e.State())
}

// TestPropertyCustodyCreditsOnlyWhatIsLetIn runs random deposits,
// withdrawals and admin decisions (seeded PCG) against a model of what the
// admin let in: after every step, each account's USDC balance is what the
// admin confirmed, less what it withdrew, plus what failed withdrawals
// refunded, and the invariant checker holds.
func TestPropertyCustodyCreditsOnlyWhatIsLetIn(t *testing.T) {
	const seed, steps = 0xc057, 3000
	r := rand.New(rand.NewPCG(seed, seed))
	h := newHarness(t)
	var accts []uuid.UUID
	model := map[uuid.UUID]money.Amount{}
	for i := range 4 {
		a := h.account(fmt.Sprintf("acct%d", i), core.RoleSpeculator, 0)
		h.link(a, fmt.Sprintf("0x%040x", i+1))
		accts = append(accts, a)
	}
	ok := 0
	for step := range steps {
		a := accts[r.IntN(len(accts))]
		var err error
		switch k := r.IntN(6); k {
		case 0:
			_, err = h.e.Deposit(h.ctx, core.DepositRequest{Account: a, Amount: money.Amount(1 + r.Int64N(1e9)),
				TxHash: fmt.Sprintf("0x%064x", r.Uint64()%5000)})
		case 1:
			_, err = h.e.Withdraw(h.ctx, a, money.Amount(1+r.Int64N(1e9)))
		case 2, 3, 4, 5:
			kind := core.TransferDeposit
			if k >= 4 {
				kind = core.TransferWithdrawal
			}
			open, n := h.e.OpenTransfers(kind, 1000, 0)
			if n == 0 {
				continue
			}
			pick := open[r.IntN(len(open))]
			d := core.TransferDecision{Admin: h.admin, Transfer: pick.Transfer.ID, Amount: money.Amount(1 + r.Int64N(1e9)), ChainTx: txHash(3)}
			switch k {
			case 2:
				_, _, err = h.e.ConfirmDeposit(h.ctx, d)
				if err == nil {
					model[pick.Account] += d.Amount
				}
			case 3:
				_, _, err = h.e.RejectDeposit(h.ctx, d)
			case 4:
				_, _, err = h.e.MarkWithdrawalSent(h.ctx, d)
			case 5:
				_, _, err = h.e.MarkWithdrawalFailed(h.ctx, d)
				if err == nil {
					model[pick.Account] += pick.Transfer.Amount
				}
			}
		}
		if err == nil {
			ok++
		}
		if err != nil && !errors.Is(err, core.ErrInsufficientBalance) && !errors.Is(err, core.ErrTxCredited) &&
			!errors.Is(err, core.ErrTooManyOpenTransfers) {
			t.Fatalf("seed %#x step %d: %v", seed, step, err)
		}
		// Withdrawals debit at once: take the model from the ledger's
		// withdrawals, which only the account itself can make.
		for _, acct := range accts {
			var withdrawn money.Amount
			entries, _, _ := h.e.Ledger(acct, money.USDC, 0, 1_000_000)
			for _, e := range entries {
				if e.Type == core.TxWithdrawal {
					withdrawn -= e.Amount
				}
			}
			if got, want := h.balance(acct, money.USDC), model[acct]-withdrawn; got != want {
				t.Fatalf("seed %#x step %d: account %s holds %s USDC; the admin let in %s, it withdrew %s", seed, step, acct, got, model[acct], withdrawn)
			}
		}
		if err := h.e.State().Check(); err != nil {
			t.Fatalf("seed %#x step %d: %v", seed, step, err)
		}
	}
	requireEqual(t, h.replayed(), h.e.State())
	t.Logf("seed %#x: %d steps, %d applied, the checker after each", seed, steps, ok)
}

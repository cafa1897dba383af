package core

import (
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// CustodyMode says who lets USDC in and out (docs/API.md, "Custody").
type CustodyMode uint8

// The custody modes.
const (
	// CustodyModeManual, the default, records a deposit as pending and
	// credits it only when an admin confirms it, and keeps a withdrawal
	// queued until an admin marks it sent or failed: no USDC is credited
	// that an operator did not let in.
	CustodyModeManual CustodyMode = iota
	// CustodyModeRecord confirms every deposit through the Custody at once
	// and sends every withdrawal at once: for tests and demos only.
	CustodyModeRecord
)

// String returns the mode's flag value.
func (m CustodyMode) String() string {
	if m == CustodyModeRecord {
		return "record"
	}
	return "manual"
}

// Bounds of custody (docs/API.md, "Custody").
const (
	// MaxPendingDeposits bounds an account's deposits waiting for an admin.
	MaxPendingDeposits = 10
	// MaxQueuedWithdrawals bounds an account's withdrawals waiting for an
	// admin.
	MaxQueuedWithdrawals = 10
)

// openTransfersLocked counts the account's transfers of a kind that wait
// for an admin. Caller holds a.mu.
func (a *account) openTransfersLocked(kind TransferKind) int {
	n := 0
	for _, t := range a.transfers() {
		if t.Kind == kind && t.Status.Open() {
			n++
		}
	}
	return n
}

// TransferDecision is an admin's decision on a pending deposit or a queued
// withdrawal.
type TransferDecision struct {
	Admin    uuid.UUID
	Transfer uuid.UUID
	// Amount is the amount seen on the chain, credited by a confirmation.
	Amount money.Amount
	// ChainTx is the chain's transaction of a sent withdrawal.
	ChainTx string
}

// AccountTransfer is a transfer with the account it belongs to.
type AccountTransfer struct {
	Account  uuid.UUID
	Transfer Transfer
}

// ConfirmDeposit credits a pending deposit with the amount an admin saw on
// the chain: minted and credited, the deposit final (KindDepositConfirmed).
func (e *Engine) ConfirmDeposit(ctx context.Context, d TransferDecision) (AccountTransfer, money.Amount, error) {
	if err := checkTransferAmount(d.Amount); err != nil {
		return AccountTransfer{}, 0, err
	}
	return e.decideTransfer(ctx, d, TransferDeposit, func(t *Transfer) (Kind, TxType, money.Amount, NoteKind) {
		t.Status, t.Amount = TransferCredited, d.Amount
		return KindDepositConfirmed, TxDeposit, d.Amount, NoteDepositCredited
	})
}

// RejectDeposit rejects a pending deposit: nothing is credited and its
// transaction may be deposited again (KindDepositRejected).
func (e *Engine) RejectDeposit(ctx context.Context, d TransferDecision) (AccountTransfer, money.Amount, error) {
	return e.decideTransfer(ctx, d, TransferDeposit, func(t *Transfer) (Kind, TxType, money.Amount, NoteKind) {
		t.Status = TransferRejected
		return KindDepositRejected, 0, 0, NoteDepositRejected
	})
}

// MarkWithdrawalSent marks a queued withdrawal sent, with the chain's
// transaction (KindWithdrawalSent). Its money left when it was queued.
func (e *Engine) MarkWithdrawalSent(ctx context.Context, d TransferDecision) (AccountTransfer, money.Amount, error) {
	if !validTxHash(d.ChainTx) {
		return AccountTransfer{}, 0, fieldErr("tx_hash", "must be 0x followed by 64 hexadecimal digits")
	}
	return e.decideTransfer(ctx, d, TransferWithdrawal, func(t *Transfer) (Kind, TxType, money.Amount, NoteKind) {
		t.Status, t.ChainTx = TransferSent, d.ChainTx
		return KindWithdrawalSent, 0, 0, NoteWithdrawalSent
	})
}

// MarkWithdrawalFailed marks a queued withdrawal failed and refunds it:
// the amount burned when it was queued is minted and credited back (ledger
// withdrawal_refund, KindWithdrawalFailed).
func (e *Engine) MarkWithdrawalFailed(ctx context.Context, d TransferDecision) (AccountTransfer, money.Amount, error) {
	return e.decideTransfer(ctx, d, TransferWithdrawal, func(t *Transfer) (Kind, TxType, money.Amount, NoteKind) {
		t.Status = TransferFailed
		return KindWithdrawalFailed, TxWithdrawalRefund, t.Amount, NoteWithdrawalFailed
	})
}

// decideTransfer runs an admin's decision on the open transfer d names, of
// the kind given: decide sets its after-image and says how the record
// moves money. It answers the transfer after and the account's USDC
// balance, once durable. The admin role is checked by the caller, as for
// every admin operation.
func (e *Engine) decideTransfer(ctx context.Context, d TransferDecision, kind TransferKind,
	decide func(*Transfer) (Kind, TxType, money.Amount, NoteKind)) (AccountTransfer, money.Amount, error) {
	if err := e.enter(); err != nil {
		return AccountTransfer{}, 0, err
	}
	defer e.leave()
	// custodyMu orders decisions with deposits, which look the
	// transaction up, and with wallet changes.
	e.st.custodyMu.Lock()
	defer e.st.custodyMu.Unlock()
	id, ok := e.st.transferAccount(d.Transfer)
	var a *account
	if ok {
		a = e.st.account(id)
	}
	if a == nil {
		return e.findFinal(ctx, d.Transfer, kind)
	}
	// With an Idempotency-Key, the admin's account holds the answer and
	// joins the record: locked with the holder's, in the lock order.
	admin, err := e.idemCaller(ctx)
	if err != nil {
		return AccountTransfer{}, 0, err
	}
	locked := []*account{a}
	if admin != nil {
		locked = append(locked, admin)
	}
	unlock := lockAccounts(locked...)
	ts := a.transfers()
	i := slices.IndexFunc(ts, func(t Transfer) bool { return t.ID == d.Transfer })
	if i < 0 || ts[i].Kind != kind || !ts[i].Status.Open() {
		unlock()
		return e.findFinal(ctx, d.Transfer, kind)
	}
	t := ts[i]
	t.ResolvedAt, t.ResolvedBy = e.now(), d.Admin
	recKind, tx, signed, note := decide(&t)
	after, done, err := e.commitTransferRecord(ctx, a, recKind, t, true, tx, signed, note, admin)
	unlock()
	if err != nil {
		return AccountTransfer{}, 0, err
	}
	if err := <-done; err != nil {
		return AccountTransfer{}, 0, err
	}
	return AccountTransfer{Account: a.id, Transfer: t}, after, nil
}

// findFinal answers a decision on a transfer that is not open:
// ErrTransferFinal when some account has it (of the kind), once that
// account's state is durable, else ErrTransferNotFound. It walks the
// accounts: a refusal is rare and an admin's.
func (e *Engine) findFinal(ctx context.Context, id uuid.UUID, kind TransferKind) (AccountTransfer, money.Amount, error) {
	var lsn uint64
	found := false
	e.st.rangeAccounts(func(a *account) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		if slices.ContainsFunc(a.transfers(), func(t Transfer) bool { return t.ID == id && t.Kind == kind }) {
			found, lsn = true, a.lsn
			return false
		}
		return true
	})
	if !found {
		return AccountTransfer{}, 0, ErrTransferNotFound
	}
	return AccountTransfer{}, 0, e.refuse(ctx, lsn, ErrTransferFinal)
}

// MaxOpenTransfersListed bounds one page of OpenTransfers.
const MaxOpenTransfersListed = 1000

// OpenTransfers lists the pending deposits or queued withdrawals of every
// account, oldest first, from offset, at most limit (at most
// MaxOpenTransfersListed), and how many there are.
func (e *Engine) OpenTransfers(kind TransferKind, limit, offset int) ([]AccountTransfer, int) {
	ids := e.st.openTransfers()
	var all []AccountTransfer
	for tid, aid := range ids {
		a := e.st.account(aid)
		if a == nil {
			continue
		}
		a.mu.Lock()
		ts := a.transfers()
		i := slices.IndexFunc(ts, func(t Transfer) bool { return t.ID == tid })
		if i >= 0 && ts[i].Kind == kind && ts[i].Status.Open() {
			all = append(all, AccountTransfer{Account: aid, Transfer: ts[i]})
		}
		a.mu.Unlock()
	}
	slices.SortFunc(all, func(x, y AccountTransfer) int {
		if x.Transfer.Time != y.Transfer.Time {
			return cmp.Compare(x.Transfer.Time, y.Transfer.Time)
		}
		return compareIDs(x.Transfer.ID, y.Transfer.ID)
	})
	total := len(all)
	limit = min(limit, MaxOpenTransfersListed)
	if offset >= total {
		return nil, total
	}
	return all[offset:min(total, offset+limit)], total
}

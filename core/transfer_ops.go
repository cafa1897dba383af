package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"marketd/core/money"
)

// txHashDigits is the number of hexadecimal digits of a transaction hash
// after its "0x".
const txHashDigits = 64

// DepositRequest is a USDC deposit to credit: the amount that reached the
// account's wallet in transaction TxHash.
type DepositRequest struct {
	Account uuid.UUID
	Amount  money.Amount
	TxHash  string // "0x" and 64 hexadecimal digits, any case
}

// TransferResult is a deposit or withdrawal and the account's USDC balance
// after it.
type TransferResult struct {
	Transfer    Transfer
	USDCBalance money.Amount
	// Repeat: the deposit's transaction was credited before, and this is
	// that first deposit; nothing was credited now.
	Repeat bool
}

// validTxHash reports whether h is "0x" and 64 hexadecimal digits.
func validTxHash(h string) bool {
	if len(h) != 2+txHashDigits || h[:2] != "0x" {
		return false
	}
	for i := 2; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// checkTransferAmount checks an amount to deposit or withdraw
// (docs/API.md, "Conventions").
func checkTransferAmount(amount money.Amount) error {
	if amount <= 0 || amount > MaxAmount {
		return fieldErr("amount", "must be positive and at most 1e9")
	}
	return nil
}

// Deposit records a USDC deposit to an account with a linked wallet, in one
// record (KindDeposit). In the manual custody mode it is pending: nothing
// is credited until an admin confirms it (ConfirmDeposit). In the record
// mode the custody confirms it at once and the amount is minted and
// credited in the same record. A transaction is taken once (until a
// rejection frees it): a repeat by the same account answers the first
// deposit (Repeat) and credits nothing; one of another account is
// ErrTxCredited.
func (e *Engine) Deposit(ctx context.Context, req DepositRequest) (TransferResult, error) {
	if err := checkTransferAmount(req.Amount); err != nil {
		return TransferResult{}, err
	}
	if !validTxHash(req.TxHash) {
		return TransferResult{}, fieldErr("tx_hash", "must be 0x followed by 64 hexadecimal digits")
	}
	hash := strings.ToLower(req.TxHash)
	a, err := e.enterAccount(req.Account)
	if err != nil {
		return TransferResult{}, err
	}
	defer e.leave()
	if ref, ok := e.st.depositByTx(hash); ok {
		return e.repeatDeposit(ctx, a, ref)
	}
	a.mu.Lock()
	wallet := a.wallet()
	a.mu.Unlock()
	if wallet == "" {
		return TransferResult{}, ErrWalletRequired
	}
	t := Transfer{ID: e.ids.next(), Kind: TransferDeposit, Status: TransferPending, Amount: req.Amount,
		Claimed: req.Amount, TxHash: hash, Wallet: wallet, Time: e.now()}
	if e.cfg.CustodyMode == CustodyModeRecord {
		// Asked with no lock held: a chain watcher may take its time.
		t.Status = TransferCredited
		if err := e.cfg.Custody.ConfirmDeposit(ctx, a.id, t); err != nil {
			return TransferResult{}, fmt.Errorf("core: custody: confirm deposit %s: %w", hash, err)
		}
	}
	// custodyMu keeps the transaction from being credited twice between
	// the lookup and the commit.
	e.st.custodyMu.Lock()
	if ref, ok := e.st.depositByTx(hash); ok {
		e.st.custodyMu.Unlock()
		return e.repeatDeposit(ctx, a, ref)
	}
	a.mu.Lock()
	var refusal error
	switch {
	case a.wallet() != wallet:
		// Unlinked or relinked since the custody confirmed it.
		refusal = ErrWalletRequired
	case t.Status == TransferPending && a.openTransfersLocked(TransferDeposit) >= MaxPendingDeposits:
		refusal = ErrTooManyOpenTransfers
	}
	if refusal != nil {
		lsn := a.lsn
		a.mu.Unlock()
		e.st.custodyMu.Unlock()
		return TransferResult{}, e.refuse(ctx, lsn, refusal)
	}
	after, done, err := e.commitTransfer(ctx, a, t)
	a.mu.Unlock()
	e.st.custodyMu.Unlock()
	if err != nil {
		return TransferResult{}, err
	}
	if err := <-done; err != nil {
		return TransferResult{}, err
	}
	return TransferResult{Transfer: t, USDCBalance: after}, nil
}

// TransferDecided is the outcome of an admin's decision on a transfer that
// an idempotent request stores: the transfer after it and the holder's
// USDC balance.
type TransferDecided struct {
	AccountTransfer
	USDCBalance money.Amount
}

// commitTransfer logs a new transfer t of a in one record (KindDeposit or
// KindWithdrawal): the transfer, its notification and, unless it is a
// pending deposit, which moves no money until an admin confirms it, the
// USDC balance moved by t.Amount (credited for a deposit, debited for a
// withdrawal), its ledger entry and the amount minted or burned. It
// returns the USDC balance after it and the channel of the journal's
// answer. The caller holds a's lock (and custodyMu for a deposit).
// ctx carries the request's Idempotency-Key, if any; an update's answer
// is stored in admin's account (locked by the caller), a new transfer's in
// a's.
func (e *Engine) commitTransfer(ctx context.Context, a *account, t Transfer) (money.Amount, <-chan error, error) {
	kind, tx, signed := KindDeposit, TxDeposit, t.Amount
	note := map[TransferStatus]NoteKind{TransferPending: NoteDepositPending, TransferCredited: NoteDepositCredited,
		TransferQueued: NoteWithdrawalQueued, TransferSent: NoteWithdrawalSent}[t.Status]
	if t.Kind == TransferWithdrawal {
		kind, tx, signed = KindWithdrawal, TxWithdrawal, -t.Amount
	}
	if t.Status == TransferPending {
		signed = 0
	}
	return e.commitTransferRecord(ctx, a, kind, t, false, tx, signed, note, nil)
}

// commitTransferRecord logs one change of a transfer of a: new (appended)
// or, when update, its after-image; a ledger entry of tx moving the USDC
// balance by signed (none when 0), minting what it credits and burning
// what it debits, so that the supply follows the money that crossed the
// custody; and a notification of kind note. Every sum is checked before
// anything is applied: a balance or a supply that would overflow refuses
// the operation (ErrTotalLimit). The caller holds a's lock (and custodyMu
// for a deposit).
func (e *Engine) commitTransferRecord(ctx context.Context, a *account, kind Kind, t Transfer, update bool, tx TxType, signed money.Amount, note NoteKind, admin *account) (money.Amount, <-chan error, error) {
	e.st.supply.mu.Lock()
	defer e.st.supply.mu.Unlock()
	p := &pending{}
	now := t.Time
	if update {
		now = t.ResolvedAt
	}
	p.rec = Record{Kind: kind, Time: now}
	var s sums
	ac := p.addAccount(a)
	after := a.balances[money.USDC]
	if signed != 0 {
		after = s.add(after, signed)
		p.credit(ac, money.USDC, tx, signed, after, t.ID, now)
		minted, burned := e.st.supply.minted, e.st.supply.burned
		if signed > 0 {
			minted[money.USDC] = s.mint(minted[money.USDC], burned[money.USDC], signed)
		} else {
			burned[money.USDC] = s.add(burned[money.USDC], -signed)
		}
		p.rec.Supply = &SupplyChange{Prev: e.st.supply.lsn, Minted: minted, Burned: burned}
	}
	if update {
		ac.TransferUpdates = append(ac.TransferUpdates, t)
	} else {
		ac.Transfers = append(ac.Transfers, t)
	}
	p.notify(a, ac, Note{Kind: note, Time: now, Ref: t.ID, Currency: money.USDC, Amount: t.Amount})
	if s.err != nil {
		return 0, nil, fmt.Errorf("core: transfer: %w", s.err)
	}
	if update {
		p.answerAs(ctx, admin, TransferDecided{AccountTransfer: AccountTransfer{Account: a.id, Transfer: t}, USDCBalance: after})
	} else {
		p.answer(ctx, TransferResult{Transfer: t, USDCBalance: after})
	}
	done := make(chan error, 1)
	e.commit(p, done, nil)
	return after, done, nil
}

// repeatDeposit answers a deposit whose transaction was credited before:
// the first deposit when it was a's, ErrTxCredited when another
// account's; either only once that first deposit is durable.
func (e *Engine) repeatDeposit(ctx context.Context, a *account, ref txRef) (TransferResult, error) {
	if ref.account != a.id {
		return TransferResult{}, e.refuse(ctx, e.accountLSN(ref.account), ErrTxCredited)
	}
	a.mu.Lock()
	lsn, bal := a.lsn, a.balances[money.USDC]
	ts := a.transfers()
	i := slices.IndexFunc(ts, func(t Transfer) bool { return t.ID == ref.transfer })
	if i < 0 {
		a.mu.Unlock()
		panic(fmt.Sprintf("BUG: deposit %s of account %s in the lookup, not in the account", ref.transfer, a.id))
	}
	t := ts[i]
	a.mu.Unlock()
	if err := e.refuse(ctx, lsn, nil); err != nil {
		return TransferResult{}, err
	}
	return TransferResult{Transfer: t, USDCBalance: bal, Repeat: true}, nil
}

// Withdraw debits USDC from an account with a linked wallet and burns it,
// in one record (KindWithdrawal): in the manual custody mode the
// withdrawal is queued until an admin marks it sent or failed; in the
// record mode it is sent at once, and the custody is told once the record
// is durable (see Custody).
func (e *Engine) Withdraw(ctx context.Context, account uuid.UUID, amount money.Amount) (TransferResult, error) {
	if err := checkTransferAmount(amount); err != nil {
		return TransferResult{}, err
	}
	a, err := e.enterAccount(account)
	if err != nil {
		return TransferResult{}, err
	}
	defer e.leave()
	a.mu.Lock()
	switch {
	case a.wallet() == "":
		lsn := a.lsn
		a.mu.Unlock()
		return TransferResult{}, e.refuse(ctx, lsn, ErrWalletRequired)
	case a.balances[money.USDC] < amount:
		lsn := a.lsn
		a.mu.Unlock()
		return TransferResult{}, e.refuse(ctx, lsn, ErrInsufficientBalance)
	case e.cfg.CustodyMode == CustodyModeManual && a.openTransfersLocked(TransferWithdrawal) >= MaxQueuedWithdrawals:
		lsn := a.lsn
		a.mu.Unlock()
		return TransferResult{}, e.refuse(ctx, lsn, ErrTooManyOpenTransfers)
	}
	t := Transfer{ID: e.ids.next(), Kind: TransferWithdrawal, Status: TransferQueued, Amount: amount,
		Wallet: strings.Clone(a.wallet()), Time: e.now()} // kept for good: not a view of the account's info
	if e.cfg.CustodyMode == CustodyModeRecord {
		t.Status = TransferSent // handed to the custody once durable
	}
	after, done, err := e.commitTransfer(ctx, a, t)
	a.mu.Unlock()
	if err != nil {
		return TransferResult{}, err
	}
	if err := <-done; err != nil {
		return TransferResult{}, err
	}
	if t.Status == TransferSent {
		e.cfg.Custody.QueueWithdrawal(a.id, t)
	}
	return TransferResult{Transfer: t, USDCBalance: after}, nil
}

// Transfers returns up to limit of an account's transfers of a kind,
// newest first, and how many it has of that kind.
func (e *Engine) Transfers(id uuid.UUID, kind TransferKind, limit int) ([]Transfer, int, bool) {
	a := e.st.account(id)
	if a == nil {
		return nil, 0, false
	}
	a.mu.Lock()
	// Append-only, like the ledger: the prefix is safe to read unlocked.
	ts := slices.Clip(a.transfers())
	a.mu.Unlock()
	var out []Transfer
	total := 0
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Kind != kind {
			continue
		}
		total++
		if len(out) < limit {
			out = append(out, ts[i])
		}
	}
	return out, total, true
}

package core

import (
	"context"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// Custody is where USDC meets the outside world in CustodyModeRecord: the
// seam a chain watcher and a payout queue plug into (docs/API.md,
// "Custody"). There is no chain here; the default, RecordingCustody,
// confirms every deposit and keeps what it is told. In CustodyModeManual an
// admin decides instead, and the engine asks the Custody nothing.
//
// The engine asks ConfirmDeposit before it logs a deposit, holding no
// lock, so that a slow confirmation stalls no other account; an error
// refuses the deposit and nothing changes (wrap ErrDepositRejected for a
// 400, anything else is a 500). A confirmation may be asked for a deposit
// that is then not logged: a concurrent request for the same transaction
// was logged first, and this one answers that deposit instead.
//
// The engine tells QueueWithdrawal of a withdrawal only once its record is
// durable: money must never leave for a debit that a crash could undo. The
// record marks it sent, so a crash between the record and the call loses
// the call: delivery is at most once, which this mode, for tests and demos,
// accepts (in CustodyModeManual an admin marks each withdrawal sent with
// the chain's transaction). Withdrawals an earlier version left queued are
// told again at every start until an admin marks them, and an
// implementation dedupes by the transfer's ID. QueueWithdrawal must not
// block: it hands the withdrawal to its own queue.
type Custody interface {
	// ConfirmDeposit confirms that deposit d (with its ID, amount, tx hash
	// and the wallet it came from) reached the account's wallet.
	ConfirmDeposit(ctx context.Context, account uuid.UUID, d Transfer) error
	// QueueWithdrawal takes a durable withdrawal to send to w.Wallet.
	QueueWithdrawal(account uuid.UUID, w Transfer)
}

// MaxCustodyRecords bounds what a RecordingCustody keeps of each kind:
// past it, the oldest are dropped.
const MaxCustodyRecords = 10_000

// CustodyRecord is one transfer a RecordingCustody was told of.
type CustodyRecord struct {
	Account  uuid.UUID
	Transfer Transfer
}

// RecordingCustody is the default Custody: it confirms every deposit and
// keeps the last MaxCustodyRecords deposits and withdrawals it was told
// of, in memory, for inspection. Safe for concurrent use.
type RecordingCustody struct {
	mu          sync.Mutex
	deposits    []CustodyRecord // guarded by mu
	withdrawals []CustodyRecord // guarded by mu
}

// NewRecordingCustody returns an empty RecordingCustody.
func NewRecordingCustody() *RecordingCustody { return &RecordingCustody{} }

// ConfirmDeposit records d and confirms it.
func (c *RecordingCustody) ConfirmDeposit(_ context.Context, account uuid.UUID, d Transfer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deposits = keepLast(c.deposits, CustodyRecord{account, d})
	return nil
}

// QueueWithdrawal records w.
func (c *RecordingCustody) QueueWithdrawal(account uuid.UUID, w Transfer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.withdrawals = keepLast(c.withdrawals, CustodyRecord{account, w})
}

// Deposits returns the deposits confirmed, oldest first.
func (c *RecordingCustody) Deposits() []CustodyRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.deposits)
}

// Withdrawals returns the withdrawals queued, oldest first.
func (c *RecordingCustody) Withdrawals() []CustodyRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.withdrawals)
}

// keepLast appends r, dropping the oldest past MaxCustodyRecords.
func keepLast(rs []CustodyRecord, r CustodyRecord) []CustodyRecord {
	if len(rs) == MaxCustodyRecords {
		rs = rs[1:] // append moves the kept ones when it needs room, not each time
	}
	return append(rs, r)
}

// requeueWithdrawals tells the custody of every withdrawal still queued in
// the recovered state (see Custody), in CustodyModeRecord only: there new
// withdrawals are sent when made, so only those queued by an earlier
// version are told again, until an admin marks them. In the manual mode
// the admin sends them, and nothing is handed out at start. Runs in
// NewEngine, before any operation.
func (e *Engine) requeueWithdrawals() {
	if e.cfg.CustodyMode != CustodyModeRecord {
		return
	}
	e.st.rangeAccounts(func(a *account) bool {
		a.mu.Lock()
		ts := slices.Clip(a.transfers())
		a.mu.Unlock()
		for _, t := range ts {
			if t.Kind == TransferWithdrawal && t.Status == TransferQueued {
				e.cfg.Custody.QueueWithdrawal(a.id, t)
			}
		}
		return true
	})
}

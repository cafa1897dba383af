package core

import (
	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/internal/enum"
)

// TransferKind says whether a transfer brought USDC in or took it out.
// Values are written to disk.
type TransferKind uint8

// The transfer kinds.
const (
	TransferDeposit    TransferKind = 1
	TransferWithdrawal TransferKind = 2
)

var transferKindNames = enum.New[TransferKind]("transfer_kind", []string{
	TransferDeposit:    "deposit",
	TransferWithdrawal: "withdrawal",
})

// String returns the wire name of the kind.
func (k TransferKind) String() string { return transferKindNames.Name(k) }

// Valid reports whether k is a known kind.
func (k TransferKind) Valid() bool { return transferKindNames.Valid(k) }

// TransferStatus is where a transfer stands. Values are written to disk.
type TransferStatus uint8

// The transfer statuses (docs/API.md, "Custody"). A deposit is pending
// until an admin confirms it (credited) or rejects it; a withdrawal is
// queued until an admin marks it sent or failed (refunded). Credited,
// rejected, sent and failed are final. In the record custody mode a deposit
// is credited and a withdrawal sent when made.
const (
	TransferCredited TransferStatus = 1
	TransferQueued   TransferStatus = 2
	TransferPending  TransferStatus = 3
	TransferRejected TransferStatus = 4
	TransferSent     TransferStatus = 5
	TransferFailed   TransferStatus = 6
)

var transferStatusNames = enum.New[TransferStatus]("transfer_status", []string{
	TransferCredited: "credited",
	TransferQueued:   "queued",
	TransferPending:  "pending",
	TransferRejected: "rejected",
	TransferSent:     "sent",
	TransferFailed:   "failed",
})

// String returns the wire name of the status.
func (s TransferStatus) String() string { return transferStatusNames.Name(s) }

// Valid reports whether s is a known status.
func (s TransferStatus) Valid() bool { return transferStatusNames.Valid(s) }

// Open reports whether a transfer in status s waits for an admin: a
// pending deposit or a queued withdrawal.
func (s TransferStatus) Open() bool { return s == TransferPending || s == TransferQueued }

// Transfer is one USDC deposit or withdrawal of an account.
type Transfer struct {
	ID     uuid.UUID
	Kind   TransferKind
	Status TransferStatus
	Amount money.Amount // positive
	TxHash string       // the deposit's transaction; "" for a withdrawal
	Wallet string       // the wallet linked when it was made
	Time   int64        // Unix nanoseconds
	// Format 3 (wave 2):
	// Claimed is the amount the depositor named. Amount is that amount
	// while a deposit is pending, then what was credited: the amount an
	// admin saw on the chain.
	Claimed money.Amount
	// ChainTx is the chain's transaction hash of a sent withdrawal.
	ChainTx string
	// ResolvedAt and ResolvedBy say when and by which admin a pending
	// deposit or queued withdrawal reached its final status (0 and Nil
	// before, and for transfers final when made).
	ResolvedAt int64
	ResolvedBy uuid.UUID
}

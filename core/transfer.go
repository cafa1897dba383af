package core

import (
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TransferKind says whether a transfer brought USDC in or took it out.
// Values are written to disk.
type TransferKind uint8

// The transfer kinds.
const (
	TransferDeposit    TransferKind = 1
	TransferWithdrawal TransferKind = 2
)

// String returns the wire name of the kind.
func (k TransferKind) String() string {
	switch k {
	case TransferDeposit:
		return "deposit"
	case TransferWithdrawal:
		return "withdrawal"
	}
	return fmt.Sprintf("transfer_kind(%d)", uint8(k))
}

// Valid reports whether k is a known kind.
func (k TransferKind) Valid() bool { return k == TransferDeposit || k == TransferWithdrawal }

// TransferStatus is where a transfer stands. Values are written to disk.
type TransferStatus uint8

// The transfer statuses: a deposit is credited when recorded; a withdrawal
// is queued for the custody to send.
const (
	TransferCredited TransferStatus = 1
	TransferQueued   TransferStatus = 2
)

// String returns the wire name of the status.
func (s TransferStatus) String() string {
	switch s {
	case TransferCredited:
		return "credited"
	case TransferQueued:
		return "queued"
	}
	return fmt.Sprintf("transfer_status(%d)", uint8(s))
}

// Valid reports whether s is a known status.
func (s TransferStatus) Valid() bool { return s == TransferCredited || s == TransferQueued }

// Transfer is one USDC deposit or withdrawal of an account.
type Transfer struct {
	ID     uuid.UUID
	Kind   TransferKind
	Status TransferStatus
	Amount money.Amount // positive
	TxHash string       // the deposit's transaction; "" for a withdrawal
	Wallet string       // the wallet linked when it was made
	Time   int64        // Unix nanoseconds
}

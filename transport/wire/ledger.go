package wire

import (
	"github.com/google/uuid"

	"marketd/core/money"
)

// LedgerItem is one entry of a ledger.
type LedgerItem struct {
	ID           uuid.UUID    `json:"id"`
	Amount       money.Amount `json:"amount"`
	TxType       string       `json:"tx_type"`
	BalanceAfter money.Amount `json:"balance_after"`
	RefID        uuid.UUID    `json:"ref_id"`
	CreatedAt    Timestamp    `json:"created_at"`
}

// LedgerPage is one page of a ledger, newest first: the points ledger
// (KP) and the token balance's (USDC) are shaped and paged alike
// (docs/API.md, "GET /api/points", "GET /api/token/balance").
type LedgerPage struct {
	Count  int          `json:"count"`
	Limit  int          `json:"limit"`
	Offset int          `json:"offset"`
	Ledger []LedgerItem `json:"ledger"`
}

// Points is the answer of GET /api/points: the KP balance and a page of
// its ledger.
type Points struct {
	Balance money.Amount `json:"balance"`
	LedgerPage
}

// TokenBalance is the answer of GET /api/token/balance: the USDC balance,
// the wallet, the newest transfers and a page of the USDC ledger.
type TokenBalance struct {
	USDC          money.Amount `json:"usdc"`
	WalletAddress *string      `json:"wallet_address"`
	// DepositAddress is where to send USDC before POST
	// /api/token/deposit (-deposit-address; null when not set).
	DepositAddress *string      `json:"deposit_address"`
	Withdrawals    []Withdrawal `json:"withdrawals"`
	Deposits       []Deposit    `json:"deposits"`
	LedgerPage
}

// Deposit is a deposit (docs/API.md, "Custody"): amount is what was
// credited, or while pending what the depositor claimed; claimed_amount
// what the depositor claimed (null for deposits made before custody
// modes); resolved_at when an admin confirmed or rejected it.
type Deposit struct {
	ID            uuid.UUID     `json:"id"`
	Amount        money.Amount  `json:"amount"`
	ClaimedAmount *money.Amount `json:"claimed_amount"`
	TxHash        string        `json:"tx_hash"`
	Status        string        `json:"status"`
	CreatedAt     Timestamp     `json:"created_at"`
	ResolvedAt    *Timestamp    `json:"resolved_at"`
}

// Withdrawal is a withdrawal: tx_hash is the chain's transaction once
// sent (null before, and when sent in the record custody mode).
type Withdrawal struct {
	ID            uuid.UUID    `json:"id"`
	Amount        money.Amount `json:"amount"`
	WalletAddress string       `json:"wallet_address"`
	Status        string       `json:"status"`
	TxHash        *string      `json:"tx_hash"`
	CreatedAt     Timestamp    `json:"created_at"`
	ResolvedAt    *Timestamp   `json:"resolved_at"`
}

// DepositAnswer is the answer of POST /api/token/deposit.
type DepositAnswer struct {
	Deposit     Deposit      `json:"deposit"`
	USDCBalance money.Amount `json:"usdc_balance"`
}

// WithdrawalAnswer is the answer of POST /api/token/withdraw.
type WithdrawalAnswer struct {
	Withdrawal  Withdrawal   `json:"withdrawal"`
	USDCBalance money.Amount `json:"usdc_balance"`
}

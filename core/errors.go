package core

import (
	"errors"
	"fmt"
)

// Domain errors. Each leaves the state untouched; transport maps them to
// status codes and messages in one table.
var (
	ErrMarketNotFound        = errors.New("market not found")
	ErrAccountNotFound       = errors.New("account not found")
	ErrMarketNotActive       = errors.New("market is not active")
	ErrMarketResolved        = errors.New("market already resolved")
	ErrInsufficientBalance   = errors.New("insufficient balance")
	ErrInsufficientShares    = errors.New("insufficient shares")
	ErrInsufficientLiquidity = errors.New("insufficient liquidity")
	ErrLiquidityLimit        = errors.New("market liquidity limit")
	ErrSlippage              = errors.New("slippage limit exceeded")
	ErrNameTaken             = errors.New("name already taken")
	ErrReferrerSet           = errors.New("referral already applied")
	ErrSelfReferral          = errors.New("cannot refer oneself")
	// ErrReferralCycle reports a referral back to one's own referee.
	ErrReferralCycle    = errors.New("referral cycle")
	ErrReferralNotFound = errors.New("unknown referral code")
	ErrKeyNotFound      = errors.New("key not found")
	ErrKeyLimit         = errors.New("active key limit reached")
	ErrAdminRequired    = errors.New("admin role required")
	ErrSessionNotFound  = errors.New("session not found")
	// The oracle's refusals (decisions.md section 10).
	ErrProposalNotFound = errors.New("proposal not found")
	ErrMarketNotClosed  = errors.New("market is not closed")
	ErrProposalOpen     = errors.New("proposal already open")
	ErrNotChallengeable = errors.New("proposal is not open for challenge")
	ErrChallengeClosed  = errors.New("challenge window closed")
	ErrSelfChallenge    = errors.New("cannot challenge one's own proposal")
	ErrNotVotable       = errors.New("proposal is not open for voting")
	ErrPartyVote        = errors.New("proposer and challenger cannot vote")
	ErrAlreadyVoted     = errors.New("already voted")
	// ErrWalletRequired reports an operation that needs a linked wallet
	// (USDC mode, a deposit, a withdrawal) on an account without one.
	ErrWalletRequired = errors.New("link a wallet first")
	// ErrWalletLinked reports linking a wallet to an account that has a
	// different one: one wallet per account (decisions.md section 9).
	ErrWalletLinked = errors.New("wallet already linked")
	// ErrWalletTaken reports an address linked to another account.
	ErrWalletTaken = errors.New("wallet linked to another account")
	// ErrNoWallet reports unlinking a wallet from an account without one.
	ErrNoWallet = errors.New("no wallet linked")
	// ErrUSDCHeld reports unlinking a wallet while USDC is still held: a
	// balance or shares in a USDC book.
	ErrUSDCHeld = errors.New("usdc balance or positions remain")
	// ErrTxCredited reports a deposit transaction already credited to
	// another account.
	ErrTxCredited = errors.New("tx_hash already credited to another account")
	// ErrDepositRejected is what a Custody wraps to refuse a deposit it
	// cannot confirm; nothing changed.
	ErrDepositRejected = errors.New("deposit not confirmed by custody")
	// ErrTooManyHolders reports a market with more holders than one
	// settlement record can pay (MaxSettleHolders); nothing changed.
	ErrTooManyHolders = errors.New("market has too many holders to settle at once")
	// ErrBusy reports a market inbox that stayed full until the request's
	// deadline: the caller should retry later (503).
	ErrBusy = errors.New("market busy")
	// ErrJournalFailed reports a journal that failed to make a record
	// durable (a failed write or fsync of the log): the change it answers
	// was not acknowledged, and nothing more can be. Only a restart, which
	// replays what is on disk, can go on: memory may hold changes that
	// never became durable (docs/ARCHITECTURE.md, fail-stop).
	ErrJournalFailed = errors.New("journal failed: changes can no longer be made durable")
	// ErrClosed reports an operation on an engine that is shutting down.
	ErrClosed = errors.New("engine closed")
	// ErrCorruptReplay reports a record that does not follow the state it is
	// replayed onto: a gap, a reordering or a damaged log.
	ErrCorruptReplay = errors.New("replay: record does not follow state")
)

// FieldError reports an invalid request field; nothing was changed.
type FieldError struct {
	Field  string // the field's wire name, e.g. "shares"
	Reason string // what is wrong, e.g. "must be positive"
}

// Error returns "<field>: <reason>".
func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

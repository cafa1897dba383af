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
	// ErrMarketMoved reports an expect_seq that is no longer the book's
	// market_seq: the price the caller saw is gone.
	ErrMarketMoved  = errors.New("market moved")
	ErrNameTaken    = errors.New("name already taken")
	ErrReferrerSet  = errors.New("referral already applied")
	ErrSelfReferral = errors.New("cannot refer oneself")
	// ErrReferralCycle reports a referral back to one's own referee.
	ErrReferralCycle    = errors.New("referral cycle")
	ErrReferralNotFound = errors.New("unknown referral code")
	ErrKeyNotFound      = errors.New("key not found")
	ErrKeyLimit         = errors.New("active key limit reached")
	ErrAdminRequired    = errors.New("admin role required")
	ErrSessionNotFound  = errors.New("session not found")
	// The oracle's refusals (docs/API.md, "The oracle").
	ErrProposalNotFound = errors.New("proposal not found")
	ErrMarketNotClosed  = errors.New("market is not closed")
	ErrProposalOpen     = errors.New("proposal already open")
	ErrNotChallengeable = errors.New("proposal is not open for challenge")
	ErrChallengeClosed  = errors.New("challenge window closed")
	ErrSelfChallenge    = errors.New("cannot challenge one's own proposal")
	ErrNotVotable       = errors.New("proposal is not open for voting")
	ErrPartyVote        = errors.New("proposer and challenger cannot vote")
	ErrAlreadyVoted     = errors.New("already voted")
	// ErrVoterTooNew reports a vote by an account created after the
	// market: registration is free, so fresh accounts must not weigh on
	// an outcome.
	ErrVoterTooNew = errors.New("account created after the market cannot vote")
	// ErrVoteLimit reports a vote past MaxVotesPerProposal.
	ErrVoteLimit = errors.New("vote limit reached")
	// ErrWalletRequired reports an operation that needs a linked wallet
	// (USDC mode, a deposit, a withdrawal) on an account without one.
	ErrWalletRequired = errors.New("link a wallet first")
	// ErrWalletLinked reports linking a wallet to an account that has a
	// different one: one wallet per account (docs/API.md, "POST /api/wallet").
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
	// ErrTooManyOpenTransfers reports a deposit or withdrawal past the
	// account's bound of pending deposits (MaxPendingDeposits) or queued
	// withdrawals (MaxQueuedWithdrawals).
	ErrTooManyOpenTransfers = errors.New("too many pending deposits or queued withdrawals")
	// ErrTransferNotFound reports a deposit or withdrawal ID that no
	// account has.
	ErrTransferNotFound = errors.New("transfer not found")
	// ErrTransferFinal reports an admin decision on a deposit that is not
	// pending, or a withdrawal that is not queued: confirmed, rejected, sent
	// and failed are final.
	ErrTransferFinal = errors.New("transfer is final")
	// ErrTransfersOpen reports unlinking a wallet that has a pending
	// deposit or a queued withdrawal.
	ErrTransfersOpen = errors.New("pending deposits or queued withdrawals remain")
	// ErrTotalLimit reports an operation that would take a money total (a
	// balance, the supply, a market's collateral) past what it may hold;
	// nothing changed.
	ErrTotalLimit = errors.New("total limit exceeded")
	// ErrBusy reports a market inbox that stayed full for the engine's
	// InboxWait: the caller should retry later (503).
	ErrBusy = errors.New("market busy")
	// ErrJournalFailed reports a journal that failed to make a record
	// durable (a failed write or fsync of the log): the change it answers
	// was not acknowledged, and nothing more can be. Only a restart, which
	// replays what is on disk, can go on: memory may hold changes that
	// never became durable (docs/ARCHITECTURE.md, "Fail-stop").
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

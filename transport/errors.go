package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/password"
	"marketd/transport/strictjson"
)

// apiError is an answer other than success: a status code, the stable
// code that names the situation (docs/API.md, "Error codes"), the message
// of its {"error": "..."} body and the field at fault, if one is.
type apiError struct {
	status int
	code   string
	msg    string
	field  string // "" when no single field is at fault
	// retryAfterSeconds, when positive, is sent as Retry-After.
	retryAfterSeconds int
}

// Error returns the status, the code and the message, for logs and tests.
func (e *apiError) Error() string { return fmt.Sprintf("%d %s %s", e.status, e.code, e.msg) }

func newError(status int, code, msg string) *apiError {
	return &apiError{status: status, code: code, msg: msg}
}

// badRequest is a 400 about the request as a whole, not one field of it.
func badRequest(format string, args ...any) *apiError {
	return &apiError{status: fasthttp.StatusBadRequest, code: codeInvalidRequest, msg: fmt.Sprintf(format, args...)}
}

// fieldError is a 400 naming the one field at fault, in the message
// ("field: reason") and in the body's field.
func fieldError(field, format string, args ...any) *apiError {
	return &apiError{status: fasthttp.StatusBadRequest, code: codeInvalidField, field: field,
		msg: field + ": " + fmt.Sprintf(format, args...)}
}

// The codes of answers whose message varies with the request.
const (
	codeInvalidField   = "invalid_field"
	codeInvalidRequest = "invalid_request"
	codeInvalidJSON    = "invalid_json"
)

// The answers of the access checks (docs/API.md, "Order of checks").
var (
	errAuthRequired    = newError(fasthttp.StatusUnauthorized, "authentication_required", "Authentication required")
	errSessionRequired = newError(fasthttp.StatusForbidden, "session_required", "Session required")
	errScope           = newError(fasthttp.StatusForbidden, "insufficient_scope", "Insufficient scope")
	errAdminRole       = newError(fasthttp.StatusForbidden, "admin_required", "Admin role required")
	errNotFound        = newError(fasthttp.StatusNotFound, "not_found", "Not found")
	errMethod          = newError(fasthttp.StatusMethodNotAllowed, "method_not_allowed", "Method not allowed")
	errBodyTooLarge    = newError(fasthttp.StatusRequestEntityTooLarge, "body_too_large", "Request body too large (limit 64 KiB)")
	errInternal        = newError(fasthttp.StatusInternalServerError, "internal_error", "Internal server error")
	errCredentials     = newError(fasthttp.StatusUnauthorized, "invalid_credentials", "Invalid credentials")
	errTimeout         = newError(fasthttp.StatusRequestTimeout, "request_timeout", "Request timeout")
	errMalformed       = newError(fasthttp.StatusBadRequest, "malformed_request", "Malformed HTTP request")
)

// rateLimited is the 429 of a full rate-limit window.
func rateLimited(retryAfterSeconds int) *apiError {
	return &apiError{status: fasthttp.StatusTooManyRequests, code: "rate_limited", msg: "Rate limit exceeded",
		retryAfterSeconds: retryAfterSeconds}
}

// tooManyClients is the 503 of a rate-limit shard whose windows are all in
// use.
func tooManyClients(retryAfterSeconds int) *apiError {
	return &apiError{status: fasthttp.StatusServiceUnavailable, code: "too_many_clients", msg: "Too many clients, retry later",
		retryAfterSeconds: retryAfterSeconds}
}

// errorTable maps the core's domain errors (and the password pool's) to
// status codes and messages. It is the one place where they are chosen; a
// test walks it. An error that is in none of its rows is a 500, logged with
// its cause.
var errorTable = []struct {
	err    error
	status int
	code   string
	msg    string
	retry  int // Retry-After seconds, 0: none
}{
	{core.ErrMarketNotFound, fasthttp.StatusNotFound, "market_not_found", "Market not found", 0},
	{core.ErrAccountNotFound, fasthttp.StatusNotFound, "account_not_found", "Account not found", 0},
	{core.ErrMarketNotActive, fasthttp.StatusBadRequest, "market_not_active", "Market is not active", 0},
	{core.ErrMarketResolved, fasthttp.StatusBadRequest, "market_resolved", "Market already resolved", 0},
	{core.ErrInsufficientBalance, fasthttp.StatusBadRequest, "insufficient_balance", "Insufficient balance", 0},
	{core.ErrInsufficientShares, fasthttp.StatusBadRequest, "insufficient_shares", "Insufficient shares", 0},
	{core.ErrInsufficientLiquidity, fasthttp.StatusBadRequest, "insufficient_liquidity", "Insufficient liquidity", 0},
	{core.ErrLiquidityLimit, fasthttp.StatusBadRequest, "liquidity_limit", "Market liquidity limit", 0},
	{core.ErrSlippage, fasthttp.StatusBadRequest, "slippage_exceeded", "Slippage limit exceeded", 0},
	{core.ErrMarketMoved, fasthttp.StatusConflict, "market_moved", "Market moved since the quote (expect_seq)", 0},
	{core.ErrIdempotencyKeyReused, fasthttp.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key reused with a different request", 0},
	{core.ErrIdempotencyKeyLimit, fasthttp.StatusTooManyRequests, "idempotency_key_limit", "Too many live Idempotency-Keys for this account", 0},
	{core.ErrNameTaken, fasthttp.StatusBadRequest, "name_taken", "name: already taken", 0},
	{core.ErrReferrerSet, fasthttp.StatusBadRequest, "referral_already_applied", "Referral already applied", 0},
	{core.ErrSelfReferral, fasthttp.StatusBadRequest, "self_referral", "Cannot apply your own referral code", 0},
	{core.ErrReferralCycle, fasthttp.StatusBadRequest, "referral_cycle", "Cannot apply the code of an account you referred", 0},
	{core.ErrReferralNotFound, fasthttp.StatusNotFound, "referral_not_found", "Referral code not found", 0},
	{core.ErrKeyNotFound, fasthttp.StatusNotFound, "key_not_found", "Key not found", 0},
	{core.ErrKeyLimit, fasthttp.StatusBadRequest, "key_limit", "Active key limit reached", 0},
	{core.ErrAdminRequired, fasthttp.StatusForbidden, "admin_required", "Admin role required", 0},
	{core.ErrSessionNotFound, fasthttp.StatusUnauthorized, "authentication_required", "Authentication required", 0},
	{core.ErrProposalNotFound, fasthttp.StatusNotFound, "proposal_not_found", "Proposal not found", 0},
	{core.ErrMarketNotClosed, fasthttp.StatusBadRequest, "market_not_closed", "Market is not closed", 0},
	{core.ErrProposalOpen, fasthttp.StatusBadRequest, "proposal_open", "Proposal already open", 0},
	{core.ErrNotChallengeable, fasthttp.StatusBadRequest, "not_challengeable", "Proposal is not open for challenge", 0},
	{core.ErrChallengeClosed, fasthttp.StatusBadRequest, "challenge_closed", "Challenge window closed", 0},
	{core.ErrSelfChallenge, fasthttp.StatusBadRequest, "self_challenge", "Cannot challenge your own proposal", 0},
	{core.ErrNotVotable, fasthttp.StatusBadRequest, "not_votable", "Proposal is not open for voting", 0},
	{core.ErrPartyVote, fasthttp.StatusBadRequest, "party_vote", "Proposer and challenger cannot vote", 0},
	{core.ErrVoterTooNew, fasthttp.StatusBadRequest, "voter_too_new", "Account created after the market cannot vote", 0},
	{core.ErrVoteLimit, fasthttp.StatusBadRequest, "vote_limit", "Vote limit reached", 0},
	{core.ErrAlreadyVoted, fasthttp.StatusBadRequest, "already_voted", "Already voted", 0},
	{core.ErrWalletRequired, fasthttp.StatusBadRequest, "wallet_required", "Link a wallet first", 0},
	{core.ErrWalletLinked, fasthttp.StatusBadRequest, "wallet_linked", "Wallet already linked", 0},
	{core.ErrWalletTaken, fasthttp.StatusBadRequest, "wallet_taken", "Wallet linked to another account", 0},
	{core.ErrNoWallet, fasthttp.StatusBadRequest, "no_wallet", "No wallet linked", 0},
	{core.ErrUSDCHeld, fasthttp.StatusBadRequest, "usdc_held", "USDC balance or positions remain", 0},
	{core.ErrTxCredited, fasthttp.StatusBadRequest, "tx_already_credited", "tx_hash already credited to another account", 0},
	{core.ErrDepositRejected, fasthttp.StatusBadRequest, "deposit_rejected", "Deposit not confirmed by custody", 0},
	{core.ErrTooManyOpenTransfers, fasthttp.StatusBadRequest, "too_many_open_transfers", "Too many pending deposits or queued withdrawals", 0},
	{core.ErrTransferNotFound, fasthttp.StatusNotFound, "transfer_not_found", "Transfer not found", 0},
	{core.ErrTransferFinal, fasthttp.StatusBadRequest, "transfer_final", "Transfer is final", 0},
	{core.ErrTransfersOpen, fasthttp.StatusBadRequest, "transfers_open", "Pending deposits or queued withdrawals remain", 0},
	{core.ErrTotalLimit, fasthttp.StatusBadRequest, "total_limit", "Total limit exceeded", 0},
	{core.ErrBusy, fasthttp.StatusServiceUnavailable, "market_busy", "Market busy", 1},
	{core.ErrClosed, fasthttp.StatusServiceUnavailable, "shutting_down", "Server is shutting down", 1},
	{ErrBackupExists, fasthttp.StatusConflict, "backup_exists", "A backup of this name exists", 0},
	{ErrBackupLimit, fasthttp.StatusConflict, "backup_limit", "Too many backups: remove old ones from the backup directory", 0},
	{core.ErrJournalFailed, fasthttp.StatusServiceUnavailable, "log_failed", "Log failed", 0},
	{password.ErrBusy, fasthttp.StatusServiceUnavailable, "password_checks_busy", "Too many password checks in progress, retry later", 1},
	// A request's context ends only when the server shuts down (fasthttp
	// cancels every RequestCtx then): a password check still waiting for
	// the pool gets it.
	{context.Canceled, fasthttp.StatusServiceUnavailable, "shutting_down", "Server is shutting down", 1},
}

// toAPIError turns any error of a handler into its answer; ok is false
// for an error no table row or type covers, which is answered as a 500.
func toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	var fe *core.FieldError
	if errors.As(err, &fe) {
		return fieldError(fe.Field, "%s", fe.Reason), true
	}
	var je *strictjson.Error
	if errors.As(err, &je) {
		if je.Field == "" {
			return &apiError{status: fasthttp.StatusBadRequest, code: codeInvalidJSON, msg: je.Error()}, true
		}
		return &apiError{status: fasthttp.StatusBadRequest, code: codeInvalidField, field: je.Field, msg: je.Error()}, true
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			ae := &apiError{status: row.status, code: row.code, msg: row.msg, retryAfterSeconds: row.retry}
			if row.err == core.ErrNameTaken {
				ae.field = "name" // the one table row about a single field
			}
			return ae, true
		}
	}
	return errInternal, false
}

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

// apiError is an answer other than success: a status code and the message
// of its {"error": "..."} body.
type apiError struct {
	status int
	msg    string
	// retryAfterSeconds, when positive, is sent as Retry-After.
	retryAfterSeconds int
}

// Error returns the status and the message, for logs and tests.
func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.msg) }

func newError(status int, msg string) *apiError { return &apiError{status: status, msg: msg} }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: fasthttp.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func fieldError(field, format string, args ...any) *apiError {
	return &apiError{status: fasthttp.StatusBadRequest, msg: field + ": " + fmt.Sprintf(format, args...)}
}

// The answers of the access checks, with the spec's messages (part 7 and
// decisions.md section 2).
var (
	errAuthRequired    = newError(fasthttp.StatusUnauthorized, "Authentication required")
	errSessionRequired = newError(fasthttp.StatusForbidden, "Session required")
	errScope           = newError(fasthttp.StatusForbidden, "Insufficient scope")
	errAdminRole       = newError(fasthttp.StatusForbidden, "Admin role required")
	errNotFound        = newError(fasthttp.StatusNotFound, "Not found")
	errMethod          = newError(fasthttp.StatusMethodNotAllowed, "Method not allowed")
	errBodyTooLarge    = newError(fasthttp.StatusRequestEntityTooLarge, "Request body too large (limit 64 KiB)")
	errInternal        = newError(fasthttp.StatusInternalServerError, "Internal server error")
	errCredentials     = newError(fasthttp.StatusUnauthorized, "Invalid credentials")
)

// errorTable maps the core's domain errors (and the password pool's) to
// status codes and messages. It is the one place where they are chosen; a
// test walks it. An error that is in none of its rows is a 500, logged with
// its cause.
var errorTable = []struct {
	err    error
	status int
	msg    string
	retry  int // Retry-After seconds, 0: none
}{
	{core.ErrMarketNotFound, fasthttp.StatusNotFound, "Market not found", 0},
	{core.ErrAccountNotFound, fasthttp.StatusNotFound, "Account not found", 0},
	{core.ErrMarketNotActive, fasthttp.StatusBadRequest, "Market is not active", 0},
	{core.ErrMarketResolved, fasthttp.StatusBadRequest, "Market already resolved", 0},
	{core.ErrInsufficientBalance, fasthttp.StatusBadRequest, "Insufficient balance", 0},
	{core.ErrInsufficientShares, fasthttp.StatusBadRequest, "Insufficient shares", 0},
	{core.ErrInsufficientLiquidity, fasthttp.StatusBadRequest, "Insufficient liquidity", 0},
	{core.ErrLiquidityLimit, fasthttp.StatusBadRequest, "Market liquidity limit", 0},
	{core.ErrSlippage, fasthttp.StatusBadRequest, "Slippage limit exceeded", 0},
	{core.ErrNameTaken, fasthttp.StatusBadRequest, "name: already taken", 0},
	{core.ErrReferrerSet, fasthttp.StatusBadRequest, "Referral already applied", 0},
	{core.ErrSelfReferral, fasthttp.StatusBadRequest, "Cannot apply your own referral code", 0},
	{core.ErrReferralCycle, fasthttp.StatusBadRequest, "Cannot apply the code of an account you referred", 0},
	{core.ErrReferralNotFound, fasthttp.StatusNotFound, "Referral code not found", 0},
	{core.ErrKeyNotFound, fasthttp.StatusNotFound, "Key not found", 0},
	{core.ErrKeyLimit, fasthttp.StatusBadRequest, "Active key limit reached", 0},
	{core.ErrAdminRequired, fasthttp.StatusForbidden, "Admin role required", 0},
	{core.ErrSessionNotFound, fasthttp.StatusUnauthorized, "Authentication required", 0},
	{core.ErrProposalNotFound, fasthttp.StatusNotFound, "Proposal not found", 0},
	{core.ErrMarketNotClosed, fasthttp.StatusBadRequest, "Market is not closed", 0},
	{core.ErrProposalOpen, fasthttp.StatusBadRequest, "Proposal already open", 0},
	{core.ErrNotChallengeable, fasthttp.StatusBadRequest, "Proposal is not open for challenge", 0},
	{core.ErrChallengeClosed, fasthttp.StatusBadRequest, "Challenge window closed", 0},
	{core.ErrSelfChallenge, fasthttp.StatusBadRequest, "Cannot challenge your own proposal", 0},
	{core.ErrNotVotable, fasthttp.StatusBadRequest, "Proposal is not open for voting", 0},
	{core.ErrPartyVote, fasthttp.StatusBadRequest, "Proposer and challenger cannot vote", 0},
	{core.ErrAlreadyVoted, fasthttp.StatusBadRequest, "Already voted", 0},
	{core.ErrWalletRequired, fasthttp.StatusBadRequest, "Link a wallet first", 0},
	{core.ErrWalletLinked, fasthttp.StatusBadRequest, "Wallet already linked", 0},
	{core.ErrWalletTaken, fasthttp.StatusBadRequest, "Wallet linked to another account", 0},
	{core.ErrNoWallet, fasthttp.StatusBadRequest, "No wallet linked", 0},
	{core.ErrUSDCHeld, fasthttp.StatusBadRequest, "USDC balance or positions remain", 0},
	{core.ErrTxCredited, fasthttp.StatusBadRequest, "tx_hash already credited to another account", 0},
	{core.ErrDepositRejected, fasthttp.StatusBadRequest, "Deposit not confirmed by custody", 0},
	{core.ErrTooManyHolders, fasthttp.StatusConflict, "Market has too many holders to notify at once", 0},
	{core.ErrBusy, fasthttp.StatusServiceUnavailable, "Market busy, retry later", 1},
	{core.ErrClosed, fasthttp.StatusServiceUnavailable, "Server is shutting down", 1},
	{password.ErrBusy, fasthttp.StatusServiceUnavailable, "Too many password checks in progress, retry later", 1},
	// A request's context ends only when the server shuts down (fasthttp
	// cancels every RequestCtx then): a password check still waiting for
	// the pool gets it.
	{context.Canceled, fasthttp.StatusServiceUnavailable, "Server is shutting down", 1},
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
		return badRequest("%s", je.Error()), true
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return &apiError{status: row.status, msg: row.msg, retryAfterSeconds: row.retry}, true
		}
	}
	return errInternal, false
}

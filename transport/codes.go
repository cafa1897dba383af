package transport

import "github.com/valyala/fasthttp"

// errorCode is one stable code of an error body, with the status it always
// comes with and what it means. A code never changes meaning; docs/API.md
// ("Error codes") lists the same codes, which a test holds.
type errorCode struct {
	code    string
	status  int
	meaning string
}

// errorCodes lists every code an error body can carry. Except for
// invalid_field, invalid_request and invalid_json, whose message says
// what is wrong with the request, a code always comes with one message.
var errorCodes = []errorCode{
	{codeInvalidField, fasthttp.StatusBadRequest, "one field of the body or query is wrong; field names it"},
	{codeInvalidRequest, fasthttp.StatusBadRequest, "the fields are each valid but do not go together"},
	{codeInvalidJSON, fasthttp.StatusBadRequest, "the body is not a JSON object"},
	{"malformed_request", fasthttp.StatusBadRequest, "the HTTP request cannot be parsed"},
	{"request_timeout", fasthttp.StatusRequestTimeout, "the request was not received in time"},
	{"body_too_large", fasthttp.StatusRequestEntityTooLarge, "the body is over 64 KiB"},
	{"not_found", fasthttp.StatusNotFound, "no endpoint has this path"},
	{"method_not_allowed", fasthttp.StatusMethodNotAllowed, "the path does not take this method; Allow lists those it takes"},
	{"authentication_required", fasthttp.StatusUnauthorized, "no credentials, or credentials that are malformed, unknown, revoked or expired"},
	{"invalid_credentials", fasthttp.StatusUnauthorized, "login with a wrong name or password"},
	{"session_required", fasthttp.StatusForbidden, "the endpoint takes a session, not an API key"},
	{"insufficient_scope", fasthttp.StatusForbidden, "the API key lacks the endpoint's scope"},
	{"admin_required", fasthttp.StatusForbidden, "the endpoint is for admins"},
	{"rate_limited", fasthttp.StatusTooManyRequests, "the caller's rate-limit window is full; Retry-After says when it has room"},
	{"too_many_clients", fasthttp.StatusServiceUnavailable, "every rate-limit window is in use by other clients"},
	{"internal_error", fasthttp.StatusInternalServerError, "a failure of the server, logged with its cause"},
	{"market_busy", fasthttp.StatusServiceUnavailable, "the market's queue stayed full; retry after Retry-After"},
	{"shutting_down", fasthttp.StatusServiceUnavailable, "the server is stopping"},
	{"recovering", fasthttp.StatusServiceUnavailable, "the server is still recovering its state at start; `/readyz` says when it is done"},
	{"draining", fasthttp.StatusServiceUnavailable, "`/readyz` only: the server is stopping and takes no new traffic"},
	{"backup_exists", fasthttp.StatusConflict, "a backup of this name exists already; backups never overwrite"},
	{"backup_limit", fasthttp.StatusConflict, "the backup directory holds 32 entries already; remove old backups first"},
	{"log_failed", fasthttp.StatusServiceUnavailable, "the write-ahead log failed: nothing more is acknowledged until the restart that follows"},
	{"password_checks_busy", fasthttp.StatusServiceUnavailable, "too many password checks are running"},
	{"password_checks_limited", fasthttp.StatusTooManyRequests, "this client address started too many password checks (login, register, password change) this minute"},
	{"registration_limited", fasthttp.StatusTooManyRequests, "this client address registered too many accounts this hour"},
	{"key_changes_limited", fasthttp.StatusTooManyRequests, "this account created or rotated too many keys this hour"},
	{"too_many_connections", fasthttp.StatusServiceUnavailable, "this client address holds too many open connections; the connection is closed"},
	{"market_not_found", fasthttp.StatusNotFound, "no market has this id"},
	{"account_not_found", fasthttp.StatusNotFound, "no account has this id"},
	{"key_not_found", fasthttp.StatusNotFound, "the caller has no API key with this id"},
	{"referral_not_found", fasthttp.StatusNotFound, "no account has this referral code"},
	{"proposal_not_found", fasthttp.StatusNotFound, "the market has no open proposal"},
	{"market_not_active", fasthttp.StatusBadRequest, "the market does not take trades, splits or merges (closed or resolved)"},
	{"market_resolved", fasthttp.StatusBadRequest, "the market is resolved already"},
	{"market_not_closed", fasthttp.StatusBadRequest, "the market is still active"},
	{"insufficient_balance", fasthttp.StatusBadRequest, "the balance does not cover the cost"},
	{"insufficient_shares", fasthttp.StatusBadRequest, "the position does not hold the shares"},
	{"insufficient_liquidity", fasthttp.StatusBadRequest, "the sell would take q below q0"},
	{"liquidity_limit", fasthttp.StatusBadRequest, "the buy would take q past the market's limit"},
	{"slippage_exceeded", fasthttp.StatusBadRequest, "the cost is over max_cost or the proceeds under min_proceeds"},
	{"name_taken", fasthttp.StatusBadRequest, "another account has this name"},
	{"referral_already_applied", fasthttp.StatusBadRequest, "the account has a referrer already"},
	{"self_referral", fasthttp.StatusBadRequest, "the code is the account's own"},
	{"referral_cycle", fasthttp.StatusBadRequest, "the code's account was referred by the caller"},
	{"key_limit", fasthttp.StatusBadRequest, "the account has its most active keys"},
	{"proposal_open", fasthttp.StatusBadRequest, "the market has an open proposal already"},
	{"not_challengeable", fasthttp.StatusBadRequest, "the proposal is not open for challenge"},
	{"challenge_closed", fasthttp.StatusBadRequest, "the challenge window has passed"},
	{"self_challenge", fasthttp.StatusBadRequest, "the proposal is the caller's own"},
	{"not_votable", fasthttp.StatusBadRequest, "the proposal is not open for voting"},
	{"party_vote", fasthttp.StatusBadRequest, "the proposer and the challenger cannot vote"},
	{"already_voted", fasthttp.StatusBadRequest, "the caller voted on this proposal already"},
	{"wallet_required", fasthttp.StatusBadRequest, "the operation needs a linked wallet"},
	{"wallet_linked", fasthttp.StatusBadRequest, "the account has a wallet linked already"},
	{"wallet_taken", fasthttp.StatusBadRequest, "another account has linked this wallet"},
	{"no_wallet", fasthttp.StatusBadRequest, "the account has no wallet to unlink"},
	{"usdc_held", fasthttp.StatusBadRequest, "USDC balance or positions remain"},
	{"tx_already_credited", fasthttp.StatusBadRequest, "the deposit's transaction was credited to another account"},
	{"deposit_rejected", fasthttp.StatusBadRequest, "custody did not confirm the deposit"},
	{"voter_too_new", fasthttp.StatusBadRequest, "the account was created after the market: it cannot vote on it"},
	{"vote_limit", fasthttp.StatusBadRequest, "the proposal has its most votes"},
	{"too_many_open_transfers", fasthttp.StatusBadRequest, "the account has its most pending deposits or queued withdrawals"},
	{"transfer_not_found", fasthttp.StatusNotFound, "no account has a deposit or withdrawal with this id"},
	{"transfer_final", fasthttp.StatusBadRequest, "the deposit is not pending or the withdrawal not queued: it is final"},
	{"transfers_open", fasthttp.StatusBadRequest, "a wallet with pending deposits or queued withdrawals cannot be unlinked"},
	{"total_limit", fasthttp.StatusBadRequest, "the operation would take a balance, the supply or a market's collateral past its bound"},
	{"market_moved", fasthttp.StatusConflict, "expect_seq is no longer the book's market_seq: the quoted price is gone; nothing changed"},
	{"invalid_idempotency_key", fasthttp.StatusBadRequest, "Idempotency-Key is not 1 to 255 printable ASCII characters"},
	{"idempotency_not_supported", fasthttp.StatusBadRequest, "the endpoint does not take an Idempotency-Key"},
	{"idempotency_key_reused", fasthttp.StatusUnprocessableEntity, "the key was used, within its retention window, for another request"},
	{"idempotency_key_in_flight", fasthttp.StatusConflict, "a request with the key was still running after 10 s"},
	{"idempotency_key_limit", fasthttp.StatusTooManyRequests, "the account holds its cap of live keys; none is evicted"},
	{"idempotency_busy", fasthttp.StatusServiceUnavailable, "too many requests with keys are running at once"},
	{"idempotency_key_not_found", fasthttp.StatusNotFound, "no live stored answer has this key"},
	{"trade_not_found", fasthttp.StatusNotFound, "the caller has no trade with this id"},
}

// Package core is the trading core of marketd: accounts and their ledgers,
// markets priced by the liquidity-sensitive LMSR, positions, settlement, the
// vig, API keys and sessions, and the invariant checker. It knows nothing of
// HTTP or disks: it hands every change to a Journal (package wal) as a Record
// of after-images, and answers an operation only once the journal reports
// the record durable.
//
// # Ownership
//
// Each market is owned by one goroutine (its actor), fed through a bounded
// inbox; readers use the immutable MarketView it publishes after every
// change, or, after a trade, a split or a merge, when a reader asks for it
// (view_publish.go). Each account is guarded by its own mutex, held by whoever changes
// it from its checks until its record is handed to the journal.
// docs/ARCHITECTURE.md explains why this keeps the log in the order of the
// changes of every object, and how a snapshot is taken while trading goes
// on.
//
// Two markers, and only these, say what a function assumes; grep for them:
//
//	Runs on the market's goroutine.   only the market's actor calls it: it
//	                                  reads and writes the market's fields
//	                                  without a lock
//	Caller holds X.                   the caller holds lock X (a.mu, the
//	                                  house's mu, t.mu, x.mu, ...), and keeps
//	                                  it across the call
//
// # Lock order
//
// This is the one statement of the lock order; every other mention (docs,
// other packages) points here. A goroutine holding a lock takes only locks
// later in this list, so no two can deadlock:
//
//  1. Engine.gate: held shared by every operation, exclusively by Close;
//     a trade, a split or a merge holds its market's sendMu shared in its
//     place (Engine.enterMarket), and AuthenticateKey authTable.mu, both
//     of which Close takes after the gate.
//  2. the leaderboard's cache lock (leaderboardCache.mu): a rebuild takes
//     account locks one at a time under it, nothing else.
//  3. State.namesMu: account names, for the uniqueness of a new one.
//  4. State.custodyMu: wallet links and deposit transaction hashes.
//  5. account.mu, in ascending account ID (lockAccounts); the house is an
//     account like any other.
//  6. supply.mu: the minted and burned totals.
//  7. authTable.mu: keys and sessions.
//  8. the journal's reservation (wal.Log.mu, taken by Journal.Next).
//  9. leaves, which take no other lock while held: the derived lookups
//     (indexes.mu), the shards of idMap, arena.mu, idSource.mu,
//     RecordingCustody.mu, and a market's sendMu (held shared for a send
//     into its inbox, exclusively to retire or close the inbox).
//
// A market actor holds no lock of its own; it takes account locks in this
// order. The snapshot manager's lock (snapshot.Manager.mu) comes before all
// of them: Take holds it across a capture. Other packages' locks are never
// held together with these: the rate-limit shards and the failed-login
// guard (package transport), and the log's waiter lock (wal.Log.waitMu,
// never held with wal.Log.mu either).
//
// # Files
//
// An Engine operation lives in the file named for its area. Where an area
// has both data types and operations, AREA.go holds the types and how they
// change in memory, and AREA_ops.go the operations (the exported Engine
// methods and, when the market's actor runs them, the actor's side too).
//
//	engine.go              Engine, Config, market actors: start, run, submit
//	loops.go               the background loops: closes, key usage flush, oracle deadlines
//	retire.go              a resolved market's goroutine and inbox let go
//	counters.go            Counters, InboxDepth: what the engine did, for metrics
//	command.go             commands sent to a market's actor, its dispatch, lockAccounts
//	state.go, idmap.go     State: the accounts and markets, sharded by ID
//	arena.go               the arrays the accounts (each with its companion) and markets live in
//	journal.go             the Journal interface core writes records to
//	record.go              Record and its parts: the after-images in the log
//	record_build.go        a record under construction and its commit (pending, scratch)
//	recordsize.go          a record's size bound, checked before it is applied
//	kind_names.go          the record kinds' names
//	replay.go              State.Apply and Prepare: log records back into memory
//	replay_image.go        LoadImage and ImageLoader: a snapshot's images back into memory
//	capture.go             State.Capture: the image records of a snapshot
//	invariants.go          State.Check: conservation and every other invariant
//	invariant_report.go    State.CheckReport: the checks by family, for the offline checker
//	index.go, index_check.go  derived lookups (code, wallet, deposit tx, ...) and their check
//	enums.go, errors.go    Side, Status, Role, TxType, Scopes, Tier; domain errors
//	arith.go, ids.go       checked sums and shares; IDs and referral codes
//	totals.go              bounds of the totals: money never wraps, statistics saturate
//	views.go               reads: Account, AccountByName, Ledger, Market, Markets, Supply
//
//	account.go             an account in memory: balances, ledger, positions, image
//	account_refs.go        an account's companion (accountRefs), which holds its pointers
//	account_info.go        an account's AccountInfo, its strings in one array
//	positions.go           an account's positions: one open-addressing table by market and currency
//	fill.go                fill and ledgerSlot: an account's fills and ledger entries, a cache line each
//	account_ops.go         CreateAccount, SetReferrer, ValidName
//	profile.go             Settings and Theme
//	profile_ops.go         UpdateSettings, SetPersona, AcceptTOS, SetTradingMode, TradingMode
//	wallet.go              LinkWallet, UnlinkWallet
//	referral.go            ApplyReferral, ReferralStats
//	notes.go               Note: notifications in memory and how they are sent
//	notes_ops.go           Notes, MarkNotesRead
//	vig_payment.go         VigPayment: an account's record of vig received
//	vig_ops.go             VigReport
//	transfer.go            Transfer: deposits and withdrawals as records
//	transfer_ops.go        Deposit, Withdraw, Transfers
//	custody.go             Custody (the deposit and withdrawal seam), RecordingCustody
//	custody_admin.go       ConfirmDeposit, RejectDeposit, MarkWithdrawalSent,
//	                       MarkWithdrawalFailed, OpenTransfers: an admin's custody decisions
//	auth.go                the key and session table, Key.Active, Session.Active
//	auth_ops.go            CreateKey, RevokeKey, RotateKey, Keys, KeyByHash, CreateSession,
//	                       RevokeSession, SessionByHash
//	auth_usage.go          AuthenticateKey, FlushKeyUsage: key usage counted and logged
//	auth_purge.go          PurgeAuth: expired sessions and long-dead keys dropped through the log
//	password.go            ChangePassword: a new password ends the account's sessions
//	idempotency.go         Idempotency-Key entries: Idempotent, IdempotencyKeys
//	idempotency_call.go    IdemCall: an Idempotency-Key carried in the context of other operations
//	leaderboard.go         Leaderboard
//	stats.go               Stats
//
//	market.go              a market in memory and its MarketView
//	market_create.go       CreateMarket
//	market_fund.go         funding a market's book in a currency from the house
//	book_change.go         what a trade, a split and a merge share: the caller's side, the
//	                       actor's checks, locks and commit, the record of the book change
//	trade.go               Trade: quote, checks, apply
//	batch.go               TradeBatch
//	quote.go               QuoteTrade, QuoteSplit: binding quotes
//	fills.go               Fills, Fill: an account's trades
//	split.go               SplitMerge: quote, checks, apply
//	settle.go              Settle, the vig paid at settlement, CloseDue and a market's close
//	steps.go               a settlement's or close's records in bounded steps, resumed after a crash
//	oracle_proposal.go     Proposal and Vote, and how they change a market
//	oracle_ops.go          Propose, Challenge, Vote, Proposal, LatestProposal
//	oracle_actor.go        the actor's side of propose, challenge and vote
//	oracle_deadline.go     OracleDue: proposals and votes past their deadlines
//	oracle_stakes.go       vote stakes: the weight that decides a vote, and their payout
//
// Tests: engine_test.go (operations end to end), property_test.go (random
// workloads against the invariant checker), concurrency_test.go,
// ordering_test.go (answers only once durable, markets findable only once
// running), and one file per area as above.
//
// Amounts are exact integers of micro-units (package money); only pricing
// uses floats, and its results are rounded in the house's favour before they
// touch any balance.
package core

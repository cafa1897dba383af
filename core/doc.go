// Package core is the trading core of marketd: accounts and their ledgers,
// markets priced by the liquidity-sensitive LMSR, positions, settlement, the
// vig, API keys and sessions, and the invariant checker. It knows nothing of
// HTTP or disks: it hands every change to a Journal (package wal) as a Record
// of after-images, and answers an operation only once the journal reports
// the record durable.
//
// Ownership: each market is owned by one goroutine (its actor), fed through
// a bounded inbox; readers use the immutable MarketView it publishes after
// every change. Each account is guarded by its own mutex, held by whoever
// changes it from its checks until its record is handed to the journal.
// Operations that change several accounts lock them in ascending ID order.
// Lock order: names, custody (State.custodyMu), accounts (ascending ID),
// supply, auth table, journal;
// the leaderboard's cache lock comes before any account's.
// docs/ARCHITECTURE.md explains why this keeps the log in the order of the
// changes of every object, and how a snapshot is taken while trading goes on.
//
// # Files
//
// An Engine operation lives in the file named for its area. Where an area
// has both data types and operations, AREA.go holds the types and how they
// change in memory, and AREA_ops.go the operations (the exported Engine
// methods and, when the market's actor runs them, the actor's side too).
//
//	engine.go              Engine, Config, market actors: start, run, submit
//	command.go             commands sent to a market's actor, its dispatch, lockAccounts
//	state.go, idmap.go     State: the accounts and markets, sharded by ID
//	journal.go             the Journal interface core writes records to
//	record.go              Record and its parts: the after-images in the log
//	record_build.go        a record under construction and its commit (pending, scratch)
//	replay.go              State.Apply and LoadImage: records back into memory
//	capture.go             State.Capture: the image records of a snapshot
//	invariants.go          State.Check: conservation and every other invariant
//	index.go, index_check.go  derived lookups (code, wallet, deposit tx, ...) and their check
//	enums.go, errors.go    Side, Status, Role, TxType, Scopes, Tier; domain errors
//	arith.go, ids.go       checked sums and shares; IDs and referral codes
//	views.go               reads: Account, AccountByName, Ledger, Market, Markets, Supply
//
//	account.go             an account in memory: balances, ledger, positions, image
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
//	auth.go                the key and session table, Key.Active, Session.Active
//	auth_ops.go            CreateKey, RevokeKey, RotateKey, Keys, KeyByHash, CreateSession,
//	                       RevokeSession, SessionByHash
//	auth_usage.go          AuthenticateKey, FlushKeyUsage: key usage counted and logged
//	leaderboard.go         Leaderboard
//	stats.go               Stats
//
//	market.go              a market in memory and its MarketView
//	market_create.go       CreateMarket
//	market_fund.go         funding a market's book in a currency from the house
//	trade.go               Trade: quote, checks, apply
//	split.go               SplitMerge
//	settle.go              Settle, the vig paid at settlement, CloseDue and a market's close
//	oracle_proposal.go     Proposal and Vote, and how they change a market
//	oracle_ops.go          Propose, Challenge, Vote, Proposal, LatestProposal
//	oracle_actor.go        the actor's side of propose, challenge and vote
//	oracle_deadline.go     OracleDue: proposals and votes past their deadlines
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

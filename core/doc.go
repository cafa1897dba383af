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
// Amounts are exact integers of micro-units (package money); only pricing
// uses floats, and its results are rounded in the house's favour before they
// touch any balance.
package core

package core

import (
	"errors"
	"fmt"
)

// Limits of one record, which the log's codec (package wal/record) takes
// as its own: a record over them could never be read back, so the codec
// refuses to write one, and core refuses to build one.
const (
	// MaxRecordBytes is the largest encoded record.
	MaxRecordBytes = 64 << 20
	// MaxRecordListItems is the longest list of any kind in one record.
	MaxRecordListItems = 1 << 20
)

// Upper bounds of the encoded size of each part of a record, strings and
// byte fields aside, which count their length plus their length's varint:
// every varint counted at its longest (10 bytes), IDs and hashes at their
// size. A test holds them above the codec's encoding of generated records.
const (
	maxVarintBytes        = 10
	maxRecordHeadBytes    = 1 + maxVarintBytes + 5*maxVarintBytes + 1 + 5*maxVarintBytes
	maxAccountHeadBytes   = 16 + maxVarintBytes + 1 + 11*maxVarintBytes
	maxAccountInfoBytes   = 1 + 16 + 16 + 14*maxVarintBytes
	maxBalanceBytes       = 1 + maxVarintBytes
	maxLedgerBytes        = 2 + 16 + 6*maxVarintBytes
	maxPositionBytes      = 2 + 16 + 16 + 8*maxVarintBytes
	maxTradeBytes         = 3 + 32 + 6*maxVarintBytes
	maxNoteBytes          = 4 + 32 + 4*maxVarintBytes
	maxVigPaymentBytes    = 2 + 16 + 4*maxVarintBytes
	maxTransferBytes      = 2 + 32 + 7*maxVarintBytes
	maxMarketHeadBytes    = 16 + maxVarintBytes + 1 + 4*maxVarintBytes
	maxMarketInfoBytes    = 4 + 16 + 8 + 10*maxVarintBytes + maxStepBytes
	maxStepBytes          = 2 + 32 + 6*maxVarintBytes
	maxBookBytes          = 1 + 12*maxVarintBytes
	maxProposalBytes      = 2 + 48 + 11*maxVarintBytes
	maxVoteBytes          = 1 + 32 + 2*maxVarintBytes
	maxKeyChangeBytes     = 2 + 32 + 32 + 10*maxVarintBytes
	maxSessionChangeBytes = 32 + 16 + 5*maxVarintBytes
	maxIdemBytes          = 32 + 3*maxVarintBytes // and its key and answer
)

// ErrRecordTooLarge reports an operation whose record would pass the
// log's limits (MaxRecordBytes, MaxRecordListItems); nothing changed. Every
// writer of records bounds what it puts in one, so this is a writer that
// does not, refused before anything is applied.
var ErrRecordTooLarge = errors.New("record too large")

// CheckRecordSize returns ErrRecordTooLarge for a record the codec could
// not write: commit calls it before anything of a record is applied, and
// the snapshot writer before it encodes an image chunk, so that neither
// ever reaches the codec's assertion.
func CheckRecordSize(r *Record) error {
	if n := maxEncodedBytes(r); n > MaxRecordBytes {
		return fmt.Errorf("%w: kind %d, up to %d bytes, limit %d", ErrRecordTooLarge, r.Kind, n, MaxRecordBytes)
	}
	if n := longestList(r); n > MaxRecordListItems {
		return fmt.Errorf("%w: kind %d, a list of %d items, limit %d", ErrRecordTooLarge, r.Kind, n, MaxRecordListItems)
	}
	return nil
}

// maxEncodedBytes returns an upper bound of r's encoded size.
func maxEncodedBytes(r *Record) int {
	n := maxRecordHeadBytes
	for i := range r.Accounts {
		a := &r.Accounts[i]
		n += maxAccountHeadBytes + len(a.Balances)*maxBalanceBytes + len(a.Ledger)*maxLedgerBytes +
			len(a.Positions)*maxPositionBytes + len(a.Notes)*maxNoteBytes + len(a.NotesRead)*maxVarintBytes +
			len(a.Vig)*maxVigPaymentBytes
		if in := a.Info; in != nil {
			n += maxAccountInfoBytes + str(in.Name) + str(in.ReferralCode) + str(in.Wallet) + str(in.Persona) +
				str(in.TOSVersion) + len(in.PasswordHash) + maxVarintBytes
		}
		for j := range a.Trades {
			n += maxTradeBytes + str(a.Trades[j].Reasoning)
		}
		for _, ts := range [2][]Transfer{a.Transfers, a.TransferUpdates} {
			for j := range ts {
				n += maxTransferBytes + str(ts[j].TxHash) + str(ts[j].Wallet) + str(ts[j].ChainTx)
			}
		}
		for j := range a.Idem {
			n += maxIdemBytes + str(a.Idem[j].Key) + len(a.Idem[j].Answer) + maxVarintBytes
		}
	}
	for i := range r.Markets {
		m := &r.Markets[i]
		n += maxMarketHeadBytes + len(m.Books)*maxBookBytes + len(m.Proposals)*maxProposalBytes + len(m.Votes)*maxVoteBytes
		if in := m.Info; in != nil {
			n += maxMarketInfoBytes + str(in.Title) + str(in.Description) + str(in.Category)
		}
	}
	for i := range r.Keys {
		k := &r.Keys[i].Key
		n += maxKeyChangeBytes + str(k.Name) + str(k.Prefix)
	}
	return n + len(r.Sessions)*maxSessionChangeBytes
}

// str is a string's encoded size at most: its bytes and its length.
func str(s string) int { return len(s) + maxVarintBytes }

// longestList returns the length of r's longest list.
func longestList(r *Record) int {
	n := max(len(r.Accounts), len(r.Markets), len(r.Keys), len(r.Sessions))
	for i := range r.Accounts {
		a := &r.Accounts[i]
		n = max(n, len(a.Balances), len(a.Ledger), len(a.Positions), len(a.Trades), len(a.Notes),
			len(a.NotesRead), len(a.Vig), len(a.Transfers), len(a.TransferUpdates), len(a.Idem))
	}
	for i := range r.Markets {
		m := &r.Markets[i]
		n = max(n, len(m.Books), len(m.Proposals), len(m.Votes))
	}
	return n
}

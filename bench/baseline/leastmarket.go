package baseline

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/core/pricing"
)

// The least trade, on a market's goroutine: what a trade under
// docs/API.md ("POST /api/markets/trade") must at least do once its body
// is checked and its caller known. Each part is there because a promise
// needs it, and none is done twice:
//   - the LS-LMSR quote at the market's state, through the memo of the
//     curves marketd's markets keep (core/pricing.Memo: one exp and one
//     log1p a trade when the previous trade ended at this state);
//   - the refusals in the order docs/API.md lists (market_moved,
//     insufficient shares, liquidity, slippage, balance);
//   - the account's balance (shared by every market's goroutine, so one
//     compare-and-swap) and its position in this market (this goroutine's);
//   - one fill in the account's bounded list of this market, which the
//     account's trades, portfolio and ledger are read from;
//   - the record that replays the trade (its ids, side, type, shares,
//     amount, vig, time, market_seq and reasoning), framed with its length
//     and a CRC-32C so that a torn tail is found at replay;
//   - one hand-off of the record to the group commit, which answers the
//     request once the record is fsynced. A refusal hands over an empty
//     record: it is answered only once what it rests on is durable
//     (docs/API.md, "Conventions", Durability).

// leastFills is how many of an account's fills a market keeps: the bound
// of its list, the oldest dropped first.
const leastFills = 16

// leastFill is one fill of an account's list.
type leastFill struct {
	tradeID      uuid.UUID
	shares, cost money.Amount
	at           int64
	seq          uint64
	flags        uint8
}

// leastFillList is an account's bounded list of fills in one market.
type leastFillList struct {
	fills [leastFills]leastFill
	n     uint64
}

// leastAccount is an account with its one API key.
type leastAccount struct {
	id       uuid.UUID
	balance  atomic.Int64  // money.Amount, changed by every market's goroutine
	requests atomic.Int64  // the key's total_requests
	_        [64 - 32]byte // a line of its own: other accounts' trades run on the other core
}

// leastOrder is one trade request handed to a market's goroutine, and its
// outcome. The handler owns it until it sends it, the market and the group
// commit until done is sent to.
type leastOrder struct {
	account   *leastAccount
	acctIndex int
	req       core.TradeRequest

	refused      error // a refusal of the trade (core's), nothing changed
	tradeID      uuid.UUID
	quote        pricing.Quote
	balanceAfter money.Amount
	at           int64
	seq          uint64
	record       []byte
	done         chan error
}

// leastMarket is a market and its goroutine's state.
type leastMarket struct {
	id        uuid.UUID
	alpha     float64
	q0        money.Amount
	q         [2]money.Amount
	seq       uint64
	memo      pricing.Memo
	idPrefix  [8]byte           // trade ids: this and the market_seq
	positions [][2]money.Amount // by account
	fills     []*leastFillList  // by account; made at its first fill
	orders    chan *leastOrder
	commit    chan<- *leastOrder
	// recordBytes pads each record to it (LeastSetup.RecordBytes).
	recordBytes int
}

func newLeastMarket(id uuid.UUID, accounts, recordBytes int, commit chan<- *leastOrder) *leastMarket {
	q0 := money.Units(core.DefaultLiquidityUnit)
	m := &leastMarket{
		id: id, alpha: core.DefaultAlpha, q0: q0, q: [2]money.Amount{q0, q0},
		positions: make([][2]money.Amount, accounts),
		fills:     make([]*leastFillList, accounts),
		orders:    make(chan *leastOrder, maxWaiting),
		commit:    commit, recordBytes: recordBytes,
	}
	r := uuid.New()
	copy(m.idPrefix[:], r[:8])
	return m
}

// run trades the orders until orders is closed.
func (m *leastMarket) run() {
	for o := range m.orders {
		o.refused = m.trade(o)
		if o.refused != nil {
			o.record = o.record[:0]
		}
		m.commit <- o
	}
}

// trade does the least trade of o, or returns its refusal (core's error,
// which transport answers as marketd does) with nothing changed.
func (m *leastMarket) trade(o *leastOrder) error {
	if o.req.HasExpectSeq && o.req.ExpectSeq != m.seq {
		return core.ErrMarketMoved
	}
	pos, side := &m.positions[o.acctIndex], int(o.req.Side)
	var err error
	if o.req.Sell {
		if pos[side] < o.req.Shares {
			return core.ErrInsufficientShares
		}
		err = m.memo.QuoteSell(&o.quote, m.alpha, m.q, side, o.req.Shares)
		if err == nil && o.quote.QAfter[side] < m.q0 {
			return core.ErrInsufficientLiquidity
		}
	} else {
		err = m.memo.QuoteBuy(&o.quote, m.alpha, m.q, side, o.req.Shares)
	}
	switch {
	case errors.Is(err, pricing.ErrLiquidityLimit):
		return core.ErrLiquidityLimit
	case err != nil:
		return core.ErrInsufficientLiquidity // a sell of all of q[side]: below q0 too
	}
	amount := o.quote.Amount
	if o.req.HasLimit && (o.req.Sell && amount < o.req.Limit || !o.req.Sell && amount > o.req.Limit) {
		return core.ErrSlippage
	}
	var after int64
	for {
		before := o.account.balance.Load()
		after = before + int64(amount)
		if !o.req.Sell {
			after = before - int64(amount)
			if after < 0 {
				return core.ErrInsufficientBalance
			}
		}
		if o.account.balance.CompareAndSwap(before, after) {
			break
		}
	}
	o.balanceAfter = money.Amount(after)
	if o.req.Sell {
		pos[side] -= o.req.Shares
	} else {
		pos[side] += o.req.Shares
	}
	m.q = o.quote.QAfter
	m.seq++
	o.seq, o.at = m.seq, time.Now().UnixNano()
	copy(o.tradeID[:8], m.idPrefix[:])
	binary.BigEndian.PutUint64(o.tradeID[8:], m.seq)
	o.tradeID[6] = o.tradeID[6]&0x0f | 0x40 // version 4, variant RFC 4122
	o.tradeID[8] = o.tradeID[8]&0x3f | 0x80 // (the seq's top bits are 0 for 2^62 trades)
	flags := uint8(side)
	if o.req.Sell {
		flags |= 2
	}
	fl := m.fills[o.acctIndex]
	if fl == nil {
		fl = new(leastFillList)
		m.fills[o.acctIndex] = fl
	}
	fl.fills[fl.n%leastFills] = leastFill{tradeID: o.tradeID, shares: o.req.Shares, cost: amount, at: o.at, seq: o.seq, flags: flags}
	fl.n++
	o.record = m.appendRecord(o.record[:0], o, flags)
	return nil
}

// leastRecordKind marks a trade record.
const leastRecordKind = 1

// crc32c is the table of the records' checksum.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends o's record: its length and CRC-32C, then the kind,
// the flags (side, sell), the trade, account and market ids, shares,
// amount, vig, time, market_seq and the reasoning with its length (100
// bytes without a reasoning), padded with zeros to m.recordBytes.
func (m *leastMarket) appendRecord(b []byte, o *leastOrder, flags uint8) []byte {
	start := len(b)
	b = append(b, make([]byte, 8)...) // the length and the checksum, below
	b = append(b, leastRecordKind, flags)
	b = append(b, o.tradeID[:]...)
	b = append(b, o.account.id[:]...)
	b = append(b, m.id[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(o.req.Shares))
	b = binary.LittleEndian.AppendUint64(b, uint64(o.quote.Amount))
	b = binary.LittleEndian.AppendUint64(b, uint64(o.quote.Vig))
	b = binary.LittleEndian.AppendUint64(b, uint64(o.at))
	b = binary.LittleEndian.AppendUint64(b, o.seq)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(o.req.Reasoning)))
	b = append(b, o.req.Reasoning...)
	if pad := m.recordBytes - (len(b) - start); pad > 0 {
		b = append(b, make([]byte, pad)...)
	}
	body := b[start+8:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(body, crc32c))
	return b
}

package bench

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/core/pricing"
	"marketd/internal/cputime"
	"marketd/internal/fstype"
	"marketd/wal"
)

// leastLevel is how much of a trade's least work the actors of
// BenchmarkPipelineLeast do on top of BenchmarkPipelineFloor's: each level
// adds one part to the one before, so that a part's cost is the
// difference of two rows of the same run (docs/PERFORMANCE.md, "The least
// a trade must cost").
type leastLevel int

const (
	// levelFloor is the floor's own work: the caller picks an actor by
	// index, the actor appends the fixed sample record.
	levelFloor leastLevel = iota
	// levelLookup: the caller validates the request and finds the market
	// and the account by their IDs, as a request names them.
	levelLookup
	// levelClock: the actor reads the clock once and checks that the
	// market is active and not past its closing time.
	levelClock
	// levelPrice: the actor prices the trade with core/pricing through the
	// book's memo, runs the book's checks and applies it to the book.
	levelPrice
	// levelAccount: the actor locks the account, runs the share and
	// balance checks and writes the balance and the position.
	levelAccount
	// levelLists: the actor appends a ledger entry and a fill to the
	// account's bounded lists.
	levelLists
	// levelRecord: the actor builds the record of this trade and the
	// caller's answer instead of appending the fixed sample record.
	levelRecord
)

// leastLevels are the rows of BenchmarkPipelineLeast, in order.
var leastLevels = []struct {
	name  string
	level leastLevel
}{
	{"0-floor", levelFloor},
	{"1-lookup", levelLookup},
	{"2-clock", levelClock},
	{"3-price", levelPrice},
	{"4-account", levelAccount},
	{"5-lists", levelLists},
	{"6-record", levelRecord},
}

// leastListBound is the most entries an account's ledger or fills list
// holds; reaching it refuses the trade (every list has a bound).
const leastListBound = 1 << 24

// errLeastListFull is the refusal of a trade whose account's list is full.
var errLeastListFull = errors.New("bench: an account's list is full")

// leastChunkLen is the number of entries in each of a leastList's arrays.
const leastChunkLen = 256

// leastList is the least bounded append-only list: fixed arrays allocated
// one at a time, so that an entry never moves and an append writes only
// the entry (and, once per leastChunkLen entries, allocates an array).
// tail and n come first: an append reads them, chunks only when it adds an
// array.
type leastList[T any] struct {
	tail   *[leastChunkLen]T
	n      int
	chunks []*[leastChunkLen]T
}

// push appends v, or refuses it when the list is full.
func (l *leastList[T]) push(v *T) error {
	i := l.n % leastChunkLen
	if i == 0 {
		if l.n >= leastListBound {
			return errLeastListFull
		}
		l.tail = new([leastChunkLen]T)
		l.chunks = append(l.chunks, l.tail)
	}
	l.tail[i] = *v
	l.n++
	return nil
}

// last returns the newest entry; the list is not empty.
func (l *leastList[T]) last() *T {
	return &l.tail[(l.n-1)%leastChunkLen]
}

// leastEntry is a trade in its account's one list, which serves both the
// ledger (docs/API.md, "GET /api/points": id, amount, tx_type,
// balance_after, ref_id, created_at) and the fills ("GET /api/trades":
// trade_id, market_id, side, type, currency, shares, cost, vig, created_at):
// the two share the seq, the time and the cost, the ledger's amount is the
// cost signed by the direction, the entry's and the trade's IDs derive
// from the seq (core.LedgerEntryID), and the market is its index among the
// markets. The reasoning is kept only by the profile's 20 recent trades,
// and an empty one needs nothing. 56 bytes.
type leastEntry struct {
	Seq                             uint64
	Time                            int64
	Shares, Cost, Vig, BalanceAfter money.Amount
	Market                          uint32
	Type                            core.TxType
	Currency                        money.Currency
	Side                            core.Side
	Sell                            bool
}

// leastAccount is an account as far as a trade needs it: its balance, its
// record's LSN and its list, behind the lock that every market's actor
// trading for it takes. What a trade reads and writes is in the first 64
// bytes; the struct is 128, a size class whose objects are 64-aligned.
type leastAccount struct {
	mu       sync.Mutex
	balance  money.Amount
	lsn      uint64
	id       uuid.UUID
	list     leastList[leastEntry] // tail and n in the first line
	referrer uint32                // an index into leastBench.referrers; 0: none
	_        [44]byte
}

// leastPosition is an account's position in one market as the market's
// actor keeps it: 64 bytes, one line. The referrer is an index into
// leastBench.referrers (0: none).
type leastPosition struct {
	Shares, Cost            [core.NumSides]money.Amount
	PaidIn, PaidOut, RefVig money.Amount
	Referrer                uint32
}

// leastMarket is a market's state, owned by its actor goroutine: its
// pricing parameters, its book and its memo, and the positions of its
// holders (the holders' set too, which a settlement walks).
type leastMarket struct {
	id       uuid.UUID
	index    uint32 // among the markets: a list entry's market
	inbox    chan *leastCall
	alpha    float64
	q0       money.Amount
	closesAt int64
	active   bool
	creator  uuid.UUID
	lsn      uint64
	book     core.Book
	memo     pricing.Memo
	holders  map[*leastAccount]*leastPosition
	spare    leastPosition // levelPrice's position, before accounts
	rec      core.Record   // the record of the trade in hand, reused
	recAcct  [1]core.AccountChange
	recBal   [1]core.Balance
	recLed   [1]core.LedgerEntry
	recPos   [1]core.Position
	recTrade [1]core.TradeSummary
	recMkt   [1]core.MarketChange
	recBook  [1]core.Book
}

// leastCall is one caller's trade request and its answer.
type leastCall struct {
	done    chan error // capacity 1
	acct    *leastAccount
	side    core.Side
	sell    bool
	shares  money.Amount
	limit   money.Amount
	hasLim  bool
	res     core.TradeResult
	account uuid.UUID
	market  uuid.UUID
}

// leastBench is one row's accounts and markets.
type leastBench struct {
	level    leastLevel
	log      *wal.Log
	markets  []*leastMarket
	byID     map[uuid.UUID]*leastMarket
	accounts []*leastAccount
	acctByID map[uuid.UUID]*leastAccount
	total    money.Amount // every balance and every book's collateral: conserved
	sample   *core.Record
	// referrers are the accounts that referrers' indexes name; 0 is none.
	referrers []uuid.UUID
}

// leastBonus is each account's starting balance, as core's benchmarks give.
var leastBonus = money.Units(100_000_000)

// newLeastBench makes the accounts and markets of a row, each market as
// core's CreateMarket makes one with a liquidity of 1,000,000 units.
func newLeastBench(level leastLevel, log *wal.Log, accounts int) *leastBench {
	lb := &leastBench{level: level, log: log, byID: map[uuid.UUID]*leastMarket{},
		acctByID: map[uuid.UUID]*leastAccount{}, sample: sampleTradeRecord(), referrers: []uuid.UUID{uuid.Nil}}
	q0 := money.Units(1_000_000)
	subsidy := pricing.Subsidy(core.DefaultAlpha, q0)
	for i := range floorActors {
		m := &leastMarket{id: uuid.New(), index: uint32(i), inbox: make(chan *leastCall, core.DefaultInboxSize),
			alpha: core.DefaultAlpha, q0: q0, closesAt: time.Now().Add(time.Hour).UnixNano(),
			active: true, creator: uuid.New(), lsn: 1, holders: map[*leastAccount]*leastPosition{},
			book: core.Book{Currency: money.KP, Q: [core.NumSides]money.Amount{q0, q0},
				Subsidy: subsidy, Collateral: subsidy}}
		lb.markets = append(lb.markets, m)
		lb.byID[m.id] = m
		lb.total += subsidy
	}
	for range accounts {
		a := &leastAccount{id: uuid.New(), balance: leastBonus, lsn: 1}
		lb.accounts = append(lb.accounts, a)
		lb.acctByID[a.id] = a
		lb.total += leastBonus
	}
	return lb
}

// start starts the markets' actors; each exits when its inbox is closed.
func (lb *leastBench) start() {
	for _, m := range lb.markets {
		go func() {
			for c := range m.inbox {
				if err := lb.trade(m, c); err != nil {
					c.done <- err // the caller reports it
				}
			}
		}()
	}
}

// stop closes the actors' inboxes.
func (lb *leastBench) stop() {
	for _, m := range lb.markets {
		close(m.inbox)
	}
}

// trade is an actor's work for one call at lb's level; an error is the
// trade's refusal, and the log's acknowledgement answers the call
// otherwise.
func (lb *leastBench) trade(m *leastMarket, c *leastCall) error {
	if lb.level < levelClock {
		return lb.appendRecord(lb.sample, c)
	}
	// One clock read: the closing check and the trade's time (the
	// record's and the answer's created_at).
	now := time.Now().UnixNano()
	if !m.active || now >= m.closesAt {
		return core.ErrMarketNotActive
	}
	if lb.level < levelPrice {
		return lb.appendRecord(lb.sample, c)
	}
	a := c.acct
	pos, balance := &m.spare, money.Amount(1<<62)
	if lb.level >= levelAccount {
		a.mu.Lock()
		defer a.mu.Unlock()
		pos, balance = m.position(a), a.balance
	}
	q, err := lb.quote(m, c, pos, balance)
	if err != nil {
		return err
	}
	book := m.book
	p := *pos
	if balance, err = applyLeast(c, &q, &book, &p, balance); err != nil {
		return err
	}
	if lb.level < levelAccount {
		m.book, *pos = book, p
		return lb.appendRecord(lb.sample, c)
	}
	if lb.level >= levelLists && a.list.n >= leastListBound {
		return errLeastListFull
	}
	seq, err := lb.log.Next()
	if err != nil {
		return err
	}
	ent := leastEntry{Seq: seq, Time: now, Shares: c.shares, Cost: q.Amount, Vig: q.Vig, BalanceAfter: balance,
		Market: m.index, Type: core.TxTradeBuy, Currency: money.KP, Side: c.side, Sell: c.sell}
	if c.sell {
		ent.Type = core.TxTradeSell
	}
	if lb.level >= levelLists {
		if err := a.list.push(&ent); err != nil {
			panic(err) // checked before the seq was reserved
		}
	}
	prevAcct, prevMkt := a.lsn, m.lsn
	a.balance, a.lsn, m.book, m.lsn, *pos = balance, seq, book, seq, p
	rec := lb.sample
	if lb.level >= levelRecord {
		rec = lb.record(m, a, pos, prevAcct, prevMkt, &ent, c, &q)
		r := &c.res
		r.TradeID, r.Market, r.Currency, r.Side, r.Sell = leastTradeID(seq), m.id, money.KP, c.side, c.sell
		r.Shares, r.Cost, r.Vig, r.BalanceAfter = c.shares, q.Amount, q.Vig, balance
		r.PriceYesAfter, r.PriceNoAfter = q.PricesAfter[0], q.PricesAfter[1]
		r.Time, r.MarketSeq = time.Unix(0, now).UTC(), book.Seq
	}
	// The record is encoded on this goroutine by Append, under the
	// account's lock, as core commits.
	lb.log.Append(seq, rec, c.done)
	return nil
}

// appendRecord reserves a seq and appends rec for c, as the floor's actor.
func (lb *leastBench) appendRecord(rec *core.Record, c *leastCall) error {
	seq, err := lb.log.Next()
	if err != nil {
		return err
	}
	lb.log.Append(seq, rec, c.done)
	return nil
}

// position returns a's position in m, made on a's first trade there.
func (m *leastMarket) position(a *leastAccount) *leastPosition {
	p := m.holders[a]
	if p == nil {
		p = &leastPosition{Referrer: a.referrer}
		m.holders[a] = p
	}
	return p
}

// quote prices c on m's book through its memo and runs a trade's checks in
// the order of docs/API.md, "POST /api/markets/trade": shares held,
// liquidity, the liquidity limit, slippage, balance.
func (lb *leastBench) quote(m *leastMarket, c *leastCall, pos *leastPosition, balance money.Amount) (q pricing.Quote, err error) {
	side := int(c.side)
	if c.sell {
		switch {
		case pos.Shares[side] < c.shares:
			return q, core.ErrInsufficientShares
		case m.book.Q[side]-c.shares < m.q0:
			return q, core.ErrInsufficientLiquidity
		}
		if err := m.memo.QuoteSell(&q, m.alpha, m.book.Q, side, c.shares); err != nil {
			return q, fmt.Errorf("bench: sell proceeds: %w", err)
		}
		if c.hasLim && q.Amount < c.limit {
			return q, core.ErrSlippage
		}
		return q, nil
	}
	if err := m.memo.QuoteBuy(&q, m.alpha, m.book.Q, side, c.shares); err != nil {
		return q, fmt.Errorf("bench: buy cost: %w", err)
	}
	switch {
	case c.hasLim && q.Amount > c.limit:
		return q, core.ErrSlippage
	case balance < q.Amount:
		return q, core.ErrInsufficientBalance
	}
	return q, nil
}

// applyLeast applies a quoted trade to copies of the book and the position
// and returns the balance after it, each sum checked for overflow (the
// money of docs/API.md is exact or refused): the shares and cost basis of
// the side (a sell takes the basis down pro rata), paid in or out, the
// book's q, collateral, volume, count and market_seq, and the vig's split
// between the creator, the referrer and the house.
func applyLeast(c *leastCall, q *pricing.Quote, book *core.Book, pos *leastPosition, balance money.Amount) (money.Amount, error) {
	var s leastSums
	side, cost, vig := int(c.side), q.Amount, q.Vig
	// Signed by the direction: a buy adds the shares to the position and
	// to q and moves the cost from the balance to the collateral, a sell
	// the reverse, and takes the cost basis down pro rata.
	dq, dc, basis := c.shares, cost, cost
	if c.sell {
		dq, dc, basis = -dq, -dc, -pos.Cost[side]
		if c.shares < pos.Shares[side] {
			basis = -s.check(pos.Cost[side].MulDivFloor(c.shares, pos.Shares[side]))
		}
		pos.PaidOut = s.check(pos.PaidOut.Add(cost))
	} else {
		pos.PaidIn = s.check(pos.PaidIn.Add(cost))
	}
	pos.Cost[side] = s.check(pos.Cost[side].Add(basis))
	pos.Shares[side] = s.check(pos.Shares[side].Add(dq))
	balance = s.check(balance.Sub(dc))
	book.Q[side] = s.check(book.Q[side].Add(dq))
	book.Collateral = s.check(book.Collateral.Add(dc))
	creatorVig := vig * 3 / 10
	var refVig money.Amount
	if pos.Referrer != 0 {
		refVig = vig * 2 / 10
	}
	pos.RefVig = s.check(pos.RefVig.Add(refVig))
	book.VigTotal = s.check(book.VigTotal.Add(vig))
	book.VigCreator = s.check(book.VigCreator.Add(creatorVig))
	book.VigHouse = s.check(book.VigHouse.Add(vig - creatorVig - refVig))
	book.Volume = s.check(book.Volume.Add(cost))
	book.Trades++
	book.Seq++
	if s.err != nil {
		return balance, fmt.Errorf("bench: trade: %w", s.err)
	}
	if book.Collateral < 0 || book.Q != q.QAfter {
		return balance, fmt.Errorf("bench: collateral %d, q %v after a trade quoted to %v", book.Collateral, book.Q, q.QAfter)
	}
	return balance, nil
}

// leastSums keeps the first error of a run of checked sums.
type leastSums struct{ err error }

// check returns v, keeping err when it is the first.
func (s *leastSums) check(v money.Amount, err error) money.Amount {
	if err != nil && s.err == nil {
		s.err = err
	}
	return v
}

// leastTradeID is the ID of the trade of record seq, derived from the seq
// as a ledger entry's is (core.LedgerEntryID) at an index no record's
// entries reach: no random bytes drawn, and nothing to store.
func leastTradeID(seq uint64) uuid.UUID { return core.LedgerEntryID(seq, 1<<31) }

// record builds the record replay needs to restore the trade, in the
// parts and the format of the floor's sample record (sampleTradeRecord):
// the account's balance, ledger entry, position and trade, and the
// market's book, each with the LSN it follows. m's book, a's balance and
// pos are the state after the trade.
func (lb *leastBench) record(m *leastMarket, a *leastAccount, pos *leastPosition, prevAcct, prevMkt uint64, ent *leastEntry, c *leastCall, q *pricing.Quote) *core.Record {
	id := leastTradeID(ent.Seq)
	m.recBal[0] = core.Balance{Currency: money.KP, After: a.balance}
	amount := -ent.Cost
	if ent.Sell {
		amount = ent.Cost
	}
	m.recLed[0] = core.LedgerEntry{Seq: ent.Seq, Currency: money.KP, Type: ent.Type, Amount: amount,
		BalanceAfter: ent.BalanceAfter, Ref: id, Time: ent.Time}
	p := &m.recPos[0]
	p.Market, p.Currency, p.Shares, p.Cost = m.id, money.KP, pos.Shares, pos.Cost
	p.PaidIn, p.PaidOut, p.Referrer, p.RefVig = pos.PaidIn, pos.PaidOut, lb.referrers[pos.Referrer], pos.RefVig
	t := &m.recTrade[0]
	t.ID, t.Market, t.Currency, t.Side, t.Sell = id, m.id, money.KP, c.side, c.sell
	t.Shares, t.Cost, t.Vig, t.Time = c.shares, q.Amount, q.Vig, ent.Time
	ac := &m.recAcct[0]
	ac.ID, ac.Prev, ac.Balances, ac.Ledger = a.id, prevAcct, m.recBal[:], m.recLed[:]
	ac.Positions, ac.Trades = m.recPos[:], m.recTrade[:]
	m.recBook[0] = m.book
	mc := &m.recMkt[0]
	mc.ID, mc.Prev, mc.Books = m.id, prevMkt, m.recBook[:]
	m.rec.Kind, m.rec.Time, m.rec.Accounts, m.rec.Markets = core.KindTrade, ent.Time, m.recAcct[:], m.recMkt[:]
	return &m.rec
}

// check verifies, after a run, what the row's level promises: money
// conserved (every balance plus every book's collateral, the vig inside
// the collateral), the trades counted in the books and in the accounts'
// lists, each list's last balance its account's balance, and each book's
// q and vig against its holders' positions (checkHolders).
func (lb *leastBench) check(b *testing.B, trades int) {
	if lb.level < levelPrice {
		return
	}
	var books uint64
	var sum money.Amount
	entries := 0
	for _, m := range lb.markets {
		books += m.book.Trades
		sum += m.book.Collateral
	}
	if books != uint64(trades) {
		b.Fatalf("%d trades in the books, %d made", books, trades)
	}
	for _, m := range lb.markets {
		m.checkHolders(b)
	}
	if lb.level < levelAccount {
		return
	}
	for _, a := range lb.accounts {
		sum += a.balance
		if lb.level >= levelLists {
			if a.list.n > 0 && a.list.last().BalanceAfter != a.balance {
				b.Fatalf("account %s: balance %d, its list's last %d", a.id, a.balance, a.list.last().BalanceAfter)
			}
			entries += a.list.n
		}
	}
	if lb.level >= levelLists && entries != trades {
		b.Fatalf("%d entries in the accounts' lists, %d trades made", entries, trades)
	}
	if sum != lb.total {
		b.Fatalf("money not conserved: %d before, %d after", lb.total, sum)
	}
}

// checkHolders verifies m's book against its holders' positions (the
// spare one before accounts): the shares outstanding beyond the initial q
// are the positions' and the vig accrued is the creator's, the house's and
// the referrers'.
func (m *leastMarket) checkHolders(b *testing.B) {
	var shares [core.NumSides]money.Amount
	refVig := m.spare.RefVig
	shares[core.Yes], shares[core.No] = m.spare.Shares[core.Yes], m.spare.Shares[core.No]
	for _, p := range m.holders {
		shares[core.Yes] += p.Shares[core.Yes]
		shares[core.No] += p.Shares[core.No]
		refVig += p.RefVig
	}
	bk := &m.book
	if bk.Q[core.Yes]-m.q0 != shares[core.Yes] || bk.Q[core.No]-m.q0 != shares[core.No] {
		b.Fatalf("market %s: q %v from %d, positions hold %v", m.id, bk.Q, m.q0, shares)
	}
	if bk.VigCreator+bk.VigHouse+refVig != bk.VigTotal {
		b.Fatalf("market %s: vig %d, creator %d, house %d, referrers %d", m.id, bk.VigTotal, bk.VigCreator, bk.VigHouse, refVig)
	}
}

// BenchmarkPipelineLeast runs BenchmarkPipelineFloor's shape (callers, 64
// actors fed by channels, the real log's writer acknowledging) with actors
// that also do the least work a correct trade under docs/API.md must do,
// one part more per row (leastLevels), with core's own pricing and money:
// fsync-off with 64 callers and accounts, fsync-on with 1,024, each caller
// trading as its own account, a buy of one share and then its sell on one
// market before the next, as core's BenchmarkTradeFsyncOff and
// BenchmarkTradeDurable do. A part's cost is its row's CPU per trade less
// the row before's; the rows' ratios to BenchmarkPipelineFloor of the same
// run bound core's ratios from above (docs/PERFORMANCE.md, "The least a
// trade must cost"). Any refusal or error fails the benchmark, and so does
// a run that does not conserve money.
func BenchmarkPipelineLeast(b *testing.B) {
	for _, c := range []struct {
		name    string
		fsync   bool
		callers int
	}{
		{"fsync-off", false, 64},
		{"fsync-on", true, 1024},
	} {
		for _, l := range leastLevels {
			b.Run(c.name+"/"+l.name, func(b *testing.B) {
				runLeast(b, l.level, c.fsync, c.callers)
			})
		}
	}
}

// runLeast runs one row of BenchmarkPipelineLeast.
func runLeast(b *testing.B, level leastLevel, fsync bool, callers int) {
	log, err := wal.Open(fstype.DiskTempDir(b), wal.Options{NoFsync: !fsync, Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	log.Start()
	lb := newLeastBench(level, log, callers)
	lb.start()
	marketIDs := make([]uuid.UUID, len(lb.markets))
	for i, m := range lb.markets {
		marketIDs[i] = m.id
	}
	b.ReportAllocs()
	cpu0, hasCPU := cputime.Process()
	b.ResetTimer()
	var next atomic.Int64
	var made atomic.Int64
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			call := &leastCall{done: make(chan error, 1), account: lb.accounts[g].id,
				side: core.Side(g % 2), shares: money.Units(1)}
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				call.market = marketIDs[(g+i/2)%floorActors]
				call.sell = i%2 == 1
				m := lb.markets[(g+i/2)%floorActors]
				if level >= levelLookup {
					var err error
					if m, err = lb.lookup(call); err != nil {
						b.Error(err)
						return
					}
				}
				m.inbox <- call
				if err := <-call.done; err != nil {
					b.Error(err)
					return
				}
				made.Add(1)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportTradeRate(b, cpu0, hasCPU)
	lb.stop()
	st := log.Stats()
	reportFloorCommits(b, int(st.Records), int(st.Batches), st.WriteTotal, st.FsyncTotal)
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
	if !b.Failed() {
		lb.check(b, int(made.Load()))
	}
}

// lookup validates c as a request's fields are (docs/API.md, "POST
// /api/markets/trade", errors 1 and 2) and finds its market and its
// account by their IDs, setting c.acct.
func (lb *leastBench) lookup(c *leastCall) (*leastMarket, error) {
	switch {
	case c.side != core.Yes && c.side != core.No:
		return nil, errors.New("bench: side: must be yes or no")
	case c.shares <= 0 || c.shares > core.MaxAmount:
		return nil, errors.New("bench: shares: must be positive and at most 1e9")
	case c.hasLim && (c.limit < 0 || c.limit > core.MaxAmount):
		return nil, errors.New("bench: max_cost: must be from 0 to 1e9")
	}
	m := lb.byID[c.market]
	if m == nil {
		return nil, core.ErrMarketNotFound
	}
	a := lb.acctByID[c.account]
	if a == nil {
		return nil, core.ErrAccountNotFound
	}
	c.acct = a
	return m, nil
}

// TestLeastLayout checks the sizes that docs/PERFORMANCE.md, "The least a
// trade must cost", counts lines by: a list entry in 56 bytes, a position
// in one line, and an account whose trade fields share its first line in
// a 64-aligned size class.
func TestLeastLayout(t *testing.T) {
	var a leastAccount
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"leastEntry's size", unsafe.Sizeof(leastEntry{}), 56},
		{"leastPosition's size", unsafe.Sizeof(leastPosition{}), 64},
		{"leastAccount's size", unsafe.Sizeof(a), 128},
		{"the end of leastAccount's list's n", unsafe.Offsetof(a.list) + unsafe.Offsetof(a.list.n) + unsafe.Sizeof(a.list.n), 56},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.what, c.got, c.want)
		}
	}
}

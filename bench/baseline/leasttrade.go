package baseline

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport"
)

// The least-trade handler: what a correct POST /api/markets/trade under
// docs/API.md must at least do, served as the no-op and fsync-only
// handlers are, so that marketd's trade endpoint is measured against the
// least its request allows and not only against a bare fsync. Per request:
//   - the request id every answer carries (docs/API.md, "Conventions"):
//     the client's when valid, else one made of the process's random part
//     and the connection's id and request count, with no shared counter;
//   - the route (404, 405);
//   - the API key (docs/API.md, "Authentication"): the form checked, its
//     SHA-256 taken (only the hash is stored, so no lookup can do less),
//     the hash looked up, total_requests counted (every key of a run has
//     the trade scope, so there is no scope to refuse). The
//     keys of a run are fixed, so the table is read without a lock; keys
//     of the unlimited tier (as marketd-load's) have no rate window;
//   - the body, decoded and checked by marketd's own code
//     (transport.DecodeTrade: strictjson's flat fast path, Decode for any
//     other body, both shapes, each field's message);
//   - the market looked up, and one hand-off to its goroutine, which does
//     the least trade (leastmarket.go) and hands its record to the group
//     commit (GroupCommit, the fsync-only handler's own), which answers;
//   - the 200 answer with every field docs/API.md lists, written by
//     marketd's own writer (transport.WriteTrade); a refusal is core's
//     error, answered by transport.WriteError as marketd answers it.
// Idempotency-Key is not served: a load without it need not pay for it.

const (
	// LeastFileName is the file the least-trade handler appends its
	// records to, in the directory given.
	LeastFileName = "least-trade"
	// LeastTradePath is the one path the least-trade handler serves.
	LeastTradePath = "/api/markets/trade"
)

// leastTrade is the least-trade handler's state: read only once made but
// for the accounts' counters and the markets' goroutines.
type leastTrade struct {
	keys     map[[32]byte]int // account index by key hash
	accounts []leastAccount
	markets  map[uuid.UUID]*leastMarket
	idPrefix [17]byte // the request ids' random part and the dash
	orders   sync.Pool
}

// ServeLeastTrade serves the least-trade handler of setup on ln until
// Close, its records appended to dir/LeastFileName (created or truncated)
// and fsynced by one group commit for all the markets, which commits as
// co says, as the fsync-only handler's does (ServeFsyncOnly). dir must be on the disk under test, as the fsync-only
// handler's.
func ServeLeastTrade(ln net.Listener, dir string, setup LeastSetup, co CommitOptions) (*Server, error) {
	f, err := os.Create(filepath.Join(dir, LeastFileName))
	if err != nil {
		return nil, fmt.Errorf("baseline: create the least-trade file: %w", err)
	}
	return serveLeastTrade(ln, f, setup, co, func() error { return errors.Join(f.Close(), os.Remove(f.Name())) }), nil
}

// serveLeastTrade serves the least-trade handler with its records
// written to f, committed as co says; closeFile runs once the last
// record is committed.
func serveLeastTrade(ln net.Listener, f *os.File, setup LeastSetup, co CommitOptions, closeFile func() error) *Server {
	h := &leastTrade{
		keys:     make(map[[32]byte]int, len(setup.KeyHashes)),
		accounts: make([]leastAccount, len(setup.KeyHashes)),
		markets:  make(map[uuid.UUID]*leastMarket, len(setup.Markets)),
	}
	for i, kh := range setup.KeyHashes {
		h.keys[kh] = i
		h.accounts[i].id = uuid.New()
		h.accounts[i].balance.Store(int64(setup.Balance))
	}
	r := uuid.New()
	hex.Encode(h.idPrefix[:16], r[:8])
	h.idPrefix[16] = '-'
	h.orders.New = func() any { return &leastOrder{done: make(chan error, 1)} }

	commits := make(chan *leastOrder, maxWaiting)
	var writer, markets sync.WaitGroup
	writer.Go(func() {
		GroupCommit(f, commits, maxWaiting, true, co, func(o *leastOrder) []byte { return o.record },
			func(o *leastOrder, err error) { o.done <- err }, nil)
	})
	for _, id := range setup.Markets {
		m := newLeastMarket(id, len(setup.KeyHashes), setup.RecordBytes, commits)
		h.markets[id] = m
		markets.Go(m.run)
	}
	release := func() error { // after the server's shutdown: no more orders
		for _, m := range h.markets {
			close(m.orders)
		}
		markets.Wait()
		close(commits)
		writer.Wait()
		return closeFile()
	}
	return serve(ln, "least-trade", h.serve, release)
}

// serve answers one request.
func (h *leastTrade) serve(ctx *fasthttp.RequestCtx) {
	h.setRequestID(ctx)
	if string(ctx.Path()) != LeastTradePath {
		leastError(ctx, transport.ErrRouteNotFound)
		return
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set(fasthttp.HeaderAllow, fasthttp.MethodPost)
		leastError(ctx, transport.ErrMethodNotAllowed)
		return
	}
	acct, ok := h.authenticate(ctx.Request.Header.PeekCanonical(headerAuthorization))
	if !ok {
		leastError(ctx, transport.ErrAuthenticationRequired)
		return
	}
	o := h.orders.Get().(*leastOrder)
	defer h.orders.Put(o)
	var err error
	if o.req, err = transport.DecodeTrade(ctx.PostBody(), uuid.Nil); err != nil {
		leastError(ctx, err)
		return
	}
	m := h.markets[o.req.Market]
	if m == nil {
		leastError(ctx, core.ErrMarketNotFound)
		return
	}
	o.account, o.acctIndex = &h.accounts[acct], acct
	m.orders <- o
	if err := <-o.done; err != nil {
		leastError(ctx, fmt.Errorf("baseline: least-trade: the group commit: %w", err))
		return
	}
	if o.refused != nil {
		leastError(ctx, o.refused)
		return
	}
	r := m.result(o)
	if err := transport.WriteTrade(ctx, &r); err != nil {
		leastError(ctx, fmt.Errorf("baseline: least-trade: the answer: %w", err))
	}
}

// authenticate returns the account of the API key in header (docs/API.md,
// "Authentication"), and whether there is one.
func (h *leastTrade) authenticate(header []byte) (int, bool) {
	const prefix = "Bearer "
	if len(header) < len(prefix) || !bytes.EqualFold(header[:len(prefix)], []byte(prefix)) {
		return 0, false
	}
	key := header[len(prefix):]
	if !transport.ValidKeyLiteral(key) {
		return 0, false
	}
	acct, ok := h.keys[sha256.Sum256(key)]
	if ok {
		// Every key of the setup has the trade scope and the unlimited
		// tier; the count is the key's total_requests.
		h.accounts[acct].requests.Add(1)
	}
	return acct, ok
}

// headerRequestID and headerAuthorization are the headers' canonical
// names: fasthttp normalizes a request's names as it parses them, so a
// lookup or a set by the canonical name skips normalizing it again.
var (
	headerRequestID     = []byte(transport.HeaderRequestID)
	headerAuthorization = []byte(fasthttp.HeaderAuthorization)
)

// setRequestID sets the answer's X-Request-Id: the request's own when
// marketd keeps it (transport.ValidRequestID), else a new one, 32 hex
// digits around a dash, unique across restarts by the process's random
// part.
func (h *leastTrade) setRequestID(ctx *fasthttp.RequestCtx) {
	if id := ctx.Request.Header.PeekCanonical(headerRequestID); transport.ValidRequestID(id) {
		ctx.Response.Header.SetCanonical(headerRequestID, id)
		return
	}
	var id [33]byte
	copy(id[:], h.idPrefix[:])
	var n [8]byte
	binary.BigEndian.PutUint32(n[:4], uint32(ctx.ConnID()))
	binary.BigEndian.PutUint32(n[4:], uint32(ctx.ConnRequestNum()))
	hex.Encode(id[17:], n[:])
	ctx.Response.Header.SetCanonical(headerRequestID, id[:])
}

// leastError answers err as marketd answers it (transport.WriteError);
// an error that is not a client's is a 500, logged with its cause.
func leastError(ctx *fasthttp.RequestCtx, err error) {
	if !transport.WriteError(ctx, err) {
		slog.Error("least-trade: a trade failed", "err", err, "request_id", string(ctx.Response.Header.PeekCanonical(headerRequestID)))
	}
}

// result is o's trade on m as core reports a trade, for the answer
// (docs/API.md, "POST /api/markets/trade").
func (m *leastMarket) result(o *leastOrder) core.TradeResult {
	return core.TradeResult{
		TradeID:       o.tradeID,
		Market:        m.id,
		Currency:      money.KP,
		Side:          o.req.Side,
		Sell:          o.req.Sell,
		Shares:        o.req.Shares,
		Cost:          o.quote.Amount,
		Vig:           o.quote.Vig,
		BalanceAfter:  o.balanceAfter,
		PriceYesAfter: o.quote.PricesAfter[0],
		PriceNoAfter:  o.quote.PricesAfter[1],
		Time:          time.Unix(0, o.at),
		MarketSeq:     o.seq,
	}
}

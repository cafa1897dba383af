package core

import (
	"context"
	"math"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// Market creation defaults and limits (docs/API.md, "POST /api/markets").
const (
	MinAlpha             = 0.002
	MaxAlpha             = 1.0
	MaxTitleRunes        = 200
	MaxDescriptionRunes  = 5000
	MaxCategoryRunes     = 64
	DefaultLiquidityUnit = 1000
	// MaxYearsAhead bounds closes_at, well inside the Unix-nanosecond range
	// (year 2262) that timestamps are stored in.
	MaxYearsAhead = 100
)

// DefaultAlpha makes the overround v = alpha * 2 ln 2 equal to 5%.
const DefaultAlpha = 0.05 / (2 * math.Ln2)

// NewMarket describes a market to create.
type NewMarket struct {
	Creator     uuid.UUID
	Title       string
	Description string
	Category    string
	ClosesAt    time.Time
	Alpha       float64      // 0: DefaultAlpha
	Liquidity   money.Amount // initial q_yes = q_no; 0: DefaultLiquidityUnit units
}

func (r *NewMarket) validate(now time.Time) error {
	switch n := utf8.RuneCountInString(r.Title); {
	case n == 0:
		return fieldErr("title", "is required")
	case n > MaxTitleRunes:
		return fieldErr("title", "must be at most %d characters", MaxTitleRunes)
	}
	if utf8.RuneCountInString(r.Description) > MaxDescriptionRunes {
		return fieldErr("description", "must be at most %d characters", MaxDescriptionRunes)
	}
	switch n := utf8.RuneCountInString(r.Category); {
	case n == 0:
		return fieldErr("category", "is required")
	case n > MaxCategoryRunes:
		return fieldErr("category", "must be at most %d characters", MaxCategoryRunes)
	}
	if !r.ClosesAt.After(now) {
		return fieldErr("closes_at", "must be in the future")
	}
	if r.ClosesAt.After(now.AddDate(MaxYearsAhead, 0, 0)) {
		return fieldErr("closes_at", "must be at most %d years ahead", MaxYearsAhead)
	}
	if r.Alpha != 0 && !(r.Alpha >= MinAlpha && r.Alpha <= MaxAlpha) { // also rejects NaN
		return fieldErr("alpha", "must be between %g and %g", MinAlpha, MaxAlpha)
	}
	if r.Liquidity < 0 || r.Liquidity > MaxAmount {
		return fieldErr("liquidity", "must be positive and at most 1e9")
	}
	return nil
}

// CreateMarket opens a market whose subsidy C(q0) the house funds, and
// answers once it is durable.
func (e *Engine) CreateMarket(ctx context.Context, req NewMarket) (*MarketView, error) {
	now := e.cfg.Now()
	if err := req.validate(now); err != nil {
		return nil, err
	}
	if req.Alpha == 0 {
		req.Alpha = DefaultAlpha
	}
	if req.Liquidity == 0 {
		req.Liquidity = money.Units(DefaultLiquidityUnit)
	}
	if e.st.account(req.Creator) == nil {
		return nil, ErrAccountNotFound
	}
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.leave()
	// With an Idempotency-Key, the creator's account holds the answer: it
	// joins the record, locked with the house's in the lock order.
	creator, err := e.idemCaller(ctx)
	if err != nil {
		return nil, err
	}
	house := e.st.account(HouseID)
	locked := []*account{house}
	if creator != nil {
		locked = append(locked, creator)
	}
	unlock := lockAccounts(locked...)
	subsidy := pricing.Subsidy(req.Alpha, req.Liquidity)
	var s sums
	after := s.sub(house.balances[money.KP], subsidy)
	if s.err != nil {
		unlock()
		return nil, s.err
	}
	if creator != nil {
		// The idempotency key's refusals (attachIdem's), checked here
		// too: the market's memory, taken below, is never given back
		// (arena.go), and a caller out of keys must not use it up.
		// Nothing the check reads changes while the locks are held.
		if err := e.checkIdem(creator, &idemCallOf(ctx).Idempotent, now.UnixNano()); err != nil {
			unlock()
			return nil, err
		}
	}
	// Past the last refusal: a market's memory, once allocated, is never
	// given back (arena.go).
	m := e.st.newMarket(e.ids.next())
	p := &pending{}
	p.rec = Record{Kind: KindMarketCreated, Time: now.UnixNano()}
	mc := p.addMarket(m)
	mc.Info = &MarketInfo{Title: req.Title, Description: req.Description, Category: req.Category,
		Creator: req.Creator, Alpha: req.Alpha, Q0: req.Liquidity, ClosesAt: req.ClosesAt.UnixNano(),
		CreatedAt: now.UnixNano(), Status: StatusActive}
	mc.Books = []Book{{Currency: money.KP, Q: [NumSides]money.Amount{req.Liquidity, req.Liquidity},
		Subsidy: subsidy, Collateral: subsidy}}
	p.credit(p.addAccount(house), money.KP, TxMarketSubsidy, -subsidy, after, m.id, now.UnixNano())
	if creator != nil {
		// The market's view once the record is applied, but for its LSN,
		// which an answer does not show.
		info := *mc.Info
		v := &MarketView{ID: m.id, Info: &info}
		v.Books[money.KP], v.Open[money.KP] = mc.Books[0], true
		p.answerAs(ctx, creator, v)
	}
	done := make(chan error, 1)
	e.commit(p, done, func() {
		// The actor must exist before anyone can find the market.
		e.start(m)
		e.st.addMarket(m)
	})
	unlock()
	if err := <-done; err != nil {
		return nil, err
	}
	return m.view.Load(), nil
}

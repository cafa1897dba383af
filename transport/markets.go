package transport

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// Paging of GET /api/markets (docs/API.md, "GET /api/markets") and of
// GET /api/markets/active, whose default page is its largest: a client that
// reads it without paging gets what it got before there were more than
// 1,000 active markets, and no body grows with the number of markets
// (docs/API.md, "GET /api/markets/active").
const (
	defaultMarketLimit = 50
	maxMarketLimit     = 500
	maxActiveLimit     = 1000
)

// marketQuery is a parsed GET /api/markets query.
type marketQuery struct {
	status   string // active, closed, resolved, closing, settling or all
	category string
	sort     string // newest, closing_soon or multiplier
	search   string // lowercased
	limit    int
	offset   int
}

func (s *Server) activeMarkets(ctx *fasthttp.RequestCtx, _ *caller) error {
	q := marketQuery{status: "active", sort: "newest"}
	args := ctx.QueryArgs()
	var err error
	if q.limit, err = intParam(args, "limit", maxActiveLimit, 1, maxActiveLimit); err != nil {
		return err
	}
	if q.offset, err = intParam(args, "offset", 0, 0, maxOffset); err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, s.findMarkets(q))
}

func (s *Server) listMarkets(ctx *fasthttp.RequestCtx, _ *caller) error {
	q, err := parseMarketQuery(ctx.QueryArgs())
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, s.findMarkets(q))
}

func parseMarketQuery(args *fasthttp.Args) (marketQuery, error) {
	q := marketQuery{status: "active", sort: "newest", limit: defaultMarketLimit}
	if v := args.Peek("status"); v != nil {
		q.status = string(v)
		switch q.status {
		case "active", "closed", "resolved", "closing", "settling", "all":
		default:
			return q, fieldError("status", "must be one of active, closed, resolved, closing, settling, all")
		}
	}
	if v := args.Peek("sort"); v != nil {
		q.sort = string(v)
		switch q.sort {
		case "newest", "closing_soon", "multiplier":
		default:
			return q, fieldError("sort", "must be one of newest, closing_soon, multiplier")
		}
	}
	q.category = string(args.Peek("category"))
	q.search = strings.ToLower(string(args.Peek("search")))
	var err error
	if q.limit, err = intParam(args, "limit", defaultMarketLimit, 1, maxMarketLimit); err != nil {
		return q, err
	}
	if q.offset, err = intParam(args, "offset", 0, 0, maxOffset); err != nil {
		return q, err
	}
	return q, nil
}

// findMarkets filters, sorts and pages the published market views; count
// is the number that matched before paging.
func (s *Server) findMarkets(q marketQuery) wire.MarketList {
	now := s.now().UnixNano()
	views := s.eng.Markets()
	matched := views[:0]
	for _, v := range views {
		if q.matches(v, now) {
			matched = append(matched, v)
		}
	}
	sortMarkets(matched, q.sort)
	out := wire.MarketList{Count: len(matched), Markets: []wire.Market{}}
	page := matched[min(q.offset, len(matched)):]
	if len(page) > q.limit {
		page = page[:q.limit]
	}
	for _, v := range page {
		out.Markets = append(out.Markets, marketOf(v, now))
	}
	return out
}

func (q *marketQuery) matches(v *core.MarketView, now int64) bool {
	if q.status != "all" && v.StatusAt(now).String() != q.status {
		return false
	}
	if q.category != "" && !strings.EqualFold(v.Info.Category, q.category) {
		return false
	}
	if q.search != "" && !strings.Contains(strings.ToLower(v.Info.Title), q.search) &&
		!strings.Contains(strings.ToLower(v.Info.Description), q.search) {
		return false
	}
	return true
}

// sortMarkets orders markets by the sort key; ties go by creation order, the
// later-created first (docs/API.md, "GET /api/markets"), and IDs last so that
// the order is total.
func sortMarkets(vs []*core.MarketView, by string) {
	newest := func(a, b *core.MarketView) int {
		if c := cmp.Compare(b.Info.CreatedAt, a.Info.CreatedAt); c != 0 {
			return c
		}
		// Byte order is the order of the IDs' text, without formatting
		// two strings per comparison.
		return bytes.Compare(b.ID[:], a.ID[:])
	}
	switch by {
	case "closing_soon":
		slices.SortFunc(vs, func(a, b *core.MarketView) int {
			if c := cmp.Compare(a.Info.ClosesAt, b.Info.ClosesAt); c != 0 {
				return c
			}
			return newest(a, b)
		})
	case "multiplier":
		slices.SortFunc(vs, func(a, b *core.MarketView) int {
			if c := cmp.Compare(maxMultiplier(b), maxMultiplier(a)); c != 0 {
				return c
			}
			return newest(a, b)
		})
	default:
		slices.SortFunc(vs, newest)
	}
}

func maxMultiplier(v *core.MarketView) float64 {
	yes, no := v.Prices(money.KP)
	return 1 / min(yes, no)
}

func (s *Server) getMarket(ctx *fasthttp.RequestCtx, _ *caller) error {
	// /api/markets/trade and /split-merge are POST routes that the {id}
	// route also matches for GET: a wrong method answers 405 (docs/API.md,
	// "Order of checks"), not a malformed id.
	if raw, _ := ctx.UserValue("id").(string); raw == "trade" || raw == "split-merge" || raw == "quote" || raw == "trades" {
		ctx.Response.Header.Set(fasthttp.HeaderAllow, fasthttp.MethodPost)
		return errMethod
	}
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	v, ok := s.eng.Market(id)
	if !ok {
		return core.ErrMarketNotFound
	}
	return writeJSON(ctx, fasthttp.StatusOK, marketOf(v, s.now().UnixNano()))
}

type createMarketRequest struct {
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Category    string            `json:"category"`
	ClosesAt    *string           `json:"closes_at"`
	Alpha       strictjson.Number `json:"alpha"`
	Liquidity   strictjson.Number `json:"liquidity"`
}

func (s *Server) createMarket(ctx *fasthttp.RequestCtx, c *caller, req *createMarketRequest) error {
	nm := core.NewMarket{Creator: c.account, Title: req.Title, Description: req.Description, Category: req.Category}
	if req.ClosesAt == nil {
		return fieldError("closes_at", "is required")
	}
	t, err := time.Parse(time.RFC3339Nano, *req.ClosesAt)
	if err != nil {
		return fieldError("closes_at", "must be an ISO 8601 timestamp such as 2030-01-01T00:00:00Z")
	}
	nm.ClosesAt = t.UTC()
	if req.Alpha.Set() {
		a, err := req.Alpha.Float("alpha")
		if err != nil {
			return err
		}
		if !(a >= core.MinAlpha && a <= core.MaxAlpha) {
			return fieldError("alpha", "must be between %g and %g", core.MinAlpha, core.MaxAlpha)
		}
		nm.Alpha = a
	}
	if req.Liquidity.Set() {
		l, err := positiveAmount("liquidity", req.Liquidity)
		if err != nil {
			return err
		}
		nm.Liquidity = l
	}
	v, err := s.eng.CreateMarket(ctx, nm)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusCreated, marketOf(v, s.now().UnixNano()))
}

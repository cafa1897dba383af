package load

import (
	"fmt"
	"math/rand/v2"

	"github.com/valyala/fasthttp"
)

var sideNames = [2]string{"yes", "no"}

// planned is one request chosen for a bot, and what its success does to
// the bot's holdings.
type planned struct {
	op     Op
	market int
	side   int
}

// plan draws the next request of bot b: an op of the mix, on a market of
// the skew. A sell for a bot holding no share of the market becomes a
// buy, and a merge for one without a share of each side a split, so that
// the load sends few requests bound to fail (a sell may still be refused
// when it would take q below its initial value, as one of shares that came
// from a split can).
func plan(r *rand.Rand, mix Mix, skew Skew, b *botState) planned {
	p := planned{op: mix.pick(r), market: skew.pick(r), side: r.IntN(2)}
	held := b.shares[p.market]
	switch p.op {
	case OpSell:
		switch {
		case held[p.side] > 0:
		case held[1-p.side] > 0:
			p.side = 1 - p.side
		default:
			p.op = OpBuy
		}
	case OpMerge:
		if held[0] == 0 || held[1] == 0 {
			p.op = OpSplit
		}
	}
	return p
}

// requests holds every request line and body a run sends, built once
// before it and shared, read only, by its workers: the URI of each op and
// the body of each write op on each market and side. A request is then
// filled by pointing at them, so that the load generator's own cost per
// request is the HTTP client's and little else, whichever the target.
type requests struct {
	uris [numOps]string
	// bodies[m][op][side] is the body of op (a write) on market m; a split
	// or a merge names no side and uses side 0.
	bodies [][OpActive][2][]byte
}

// opPaths are the paths of the ops.
var opPaths = [numOps]string{
	OpBuy: "/api/markets/trade", OpSell: "/api/markets/trade",
	OpSplit: "/api/markets/split-merge", OpMerge: "/api/markets/split-merge",
	OpActive: "/api/markets/active", OpMe: "/api/agents/me", OpPoints: "/api/points", OpPortfolio: "/api/portfolio",
}

// newRequests builds the requests of a run against the server at addr,
// on markets.
func newRequests(addr string, markets []string) *requests {
	rs := &requests{bodies: make([][OpActive][2][]byte, len(markets))}
	for op := range numOps {
		rs.uris[op] = "http://" + addr + opPaths[op]
	}
	for m, id := range markets {
		for side, name := range sideNames {
			for _, op := range []Op{OpBuy, OpSell} {
				rs.bodies[m][op][side] = fmt.Appendf(nil, `{"market_id":%q,"side":%q,"shares":1,"type":%q}`, id, name, op)
			}
		}
		for _, op := range []Op{OpSplit, OpMerge} {
			rs.bodies[m][op][0] = fmt.Appendf(nil, `{"market_id":%q,"amount":1,"type":%q}`, id, op)
		}
	}
	return rs
}

// fill writes p's request for bot b into req.
func (rs *requests) fill(req *fasthttp.Request, b *botState, p planned) {
	req.Reset()
	req.Header.Set(fasthttp.HeaderAuthorization, b.authorization)
	req.SetRequestURI(rs.uris[p.op])
	switch p.op {
	case OpBuy, OpSell:
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(rs.bodies[p.market][p.op][p.side])
	case OpSplit, OpMerge:
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(rs.bodies[p.market][p.op][0])
	case OpActive, OpMe, OpPoints, OpPortfolio:
		req.Header.SetMethod(fasthttp.MethodGet)
	default:
		panic(fmt.Sprintf("BUG: op %d", p.op))
	}
}

// apply changes b's holdings as p's successful answer says.
func apply(b *botState, p planned) {
	held := &b.shares[p.market]
	switch p.op {
	case OpBuy:
		held[p.side]++
	case OpSell:
		held[p.side]--
	case OpSplit:
		held[0]++
		held[1]++
	case OpMerge:
		held[0]--
		held[1]--
	}
}

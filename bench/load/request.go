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

// fill writes p's request for bot b into req; body is a reused buffer.
func fill(req *fasthttp.Request, addr string, markets []string, b *botState, p planned, body []byte) []byte {
	req.Reset()
	req.Header.Set(fasthttp.HeaderAuthorization, b.authorization)
	body = body[:0]
	method, path := fasthttp.MethodPost, ""
	switch p.op {
	case OpBuy, OpSell:
		path = "/api/markets/trade"
		body = fmt.Appendf(body, `{"market_id":%q,"side":%q,"shares":1,"type":%q}`, markets[p.market], sideNames[p.side], p.op)
	case OpSplit, OpMerge:
		path = "/api/markets/split-merge"
		body = fmt.Appendf(body, `{"market_id":%q,"amount":1,"type":%q}`, markets[p.market], p.op)
	case OpActive:
		method, path = fasthttp.MethodGet, "/api/markets/active"
	case OpMe:
		method, path = fasthttp.MethodGet, "/api/agents/me"
	case OpPoints:
		method, path = fasthttp.MethodGet, "/api/points"
	case OpPortfolio:
		method, path = fasthttp.MethodGet, "/api/portfolio"
	default:
		panic(fmt.Sprintf("BUG: op %d", p.op))
	}
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + addr + path)
	if method == fasthttp.MethodPost {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	return body
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

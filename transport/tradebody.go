package transport

import (
	"strings"
	"unsafe"

	"marketd/core"
	"marketd/transport/strictjson"
)

// A trade's body is the one body on the hot path: strictjson.Decode's
// reflection over tradeRequest took about 0.7 µs and 4 of a trade's 5
// allocations (docs/PERFORMANCE.md, "Transport: CPU per trade request").
// The usual body is a flat object of known members, strings without
// escapes and numbers; tradeBody.decode reads that one directly from
// strictjson.ScanFlat's members and hands every other body to
// strictjson.Decode, so that every refusal, and every body that holds
// anything unusual, gets Decode's answer. TestTradeBodyDecode and
// FuzzTradeBodyDecode compare the two on random and mutated bodies.

// tradeBody is a trade request with room for the strings that its
// pointer fields point to when the fast path decoded it.
type tradeBody struct {
	tradeRequest
	text [tradeStringFields]string
}

// tradeMembers are the names of tradeRequest's fields in the order
// fromFlat keeps them: first the *string ones, then the Numbers, then the
// reasoning. A body with more members has a duplicate or an unknown one,
// which Decode answers.
var tradeMembers = [...]string{
	"market_id", "side", "type", "marketId", "outcome",
	"shares", "max_cost", "min_proceeds", "amount", "expect_seq",
	"reasoning",
}

// tradeMember returns name's index in tradeMembers, -1 for none. The
// compiler's string switch (by length, then by content) took about 100
// instructions fewer a trade body than slices.Index's compare with each
// name in turn (docs/PERFORMANCE.md, "The trade request's handler,
// instruction by instruction"); TestTradeMemberIndex holds it to
// tradeMembers.
func tradeMember(name string) int {
	switch name {
	case "market_id":
		return 0
	case "side":
		return 1
	case "type":
		return 2
	case "marketId":
		return 3
	case "outcome":
		return 4
	case "shares":
		return 5
	case "max_cost":
		return 6
	case "min_proceeds":
		return 7
	case "amount":
		return 8
	case "expect_seq":
		return 9
	case "reasoning":
		return 10
	}
	return -1
}

// tradeStringFields counts tradeRequest's *string fields, tradeFields all
// of them.
const (
	tradeStringFields = 5
	tradeFields       = len(tradeMembers)
	tradeReasoning    = tradeFields - 1
)

// decode decodes a trade body strictly (strictjson.Decode's rules and
// answers) into t, which must be zero. t's strings may point into body
// (fromFlat): t must not be used once body may change, and what outlives
// the request must be copied from it (toCore does).
func (t *tradeBody) decode(body []byte) error {
	if t.fromFlat(body) {
		return nil
	}
	p := new(tradeRequest)
	if err := strictjson.Decode(body, p); err != nil {
		return err
	}
	t.tradeRequest = *p
	return nil
}

// fromFlat decodes body when it is a flat object of tradeRequest's members
// without duplicates, each of its field's JSON kind, and reports whether it
// did; t.tradeRequest is unchanged when it did not. The members are read
// in place: t's strings point into body itself, not into a copy of it
// (a copy was the trade request's one allocation, 93 bytes, about 0.1 us
// of the handler's CPU: docs/PERFORMANCE.md, "The HTTP path's own CPU per
// trade request"). So t must not be used once body changes: fasthttp
// reuses a request's body after its handler returns, and the trade
// handler turns t into a core request (toCore, which keeps no string of
// it but a cloned reasoning) and puts it back before that.
func (t *tradeBody) fromFlat(body []byte) bool {
	var buf [tradeFields]strictjson.Member
	members, ok := strictjson.ScanFlat(unsafe.String(unsafe.SliceData(body), len(body)), buf[:0])
	return ok && t.fromMembers(members)
}

// fromMembers decodes a trade from the members of its flat object when
// they are tradeRequest's fields without duplicates, each of its field's
// JSON kind, and reports whether it did; t.tradeRequest is unchanged when
// it did not.
func (t *tradeBody) fromMembers(members []strictjson.Member) bool {
	var r tradeRequest
	strs := [tradeStringFields]**string{&r.MarketID, &r.Side, &r.Type, &r.WorkflowMarketID, &r.Outcome}
	nums := [...]*strictjson.Number{&r.Shares, &r.MaxCost, &r.MinProceeds, &r.Amount, &r.ExpectSeq}
	var seen uint16
	for i := range members {
		m := &members[i]
		f := tradeMember(m.Name)
		switch {
		case f < 0 || seen&(1<<f) != 0:
			return false // unknown or duplicate
		case f < tradeStringFields && !m.Number:
			t.text[f] = m.Value
			*strs[f] = &t.text[f]
		case f < tradeReasoning && f >= tradeStringFields && m.Number:
			*nums[f-tradeStringFields] = m.Num()
		case f == tradeReasoning && !m.Number:
			// The members point into the request's body (or, for a
			// batch, one string of all of it): the reasoning the engine
			// keeps must hold neither.
			r.Reasoning = strings.Clone(m.Value)
		default:
			return false // a number for a string or a string for a number
		}
		seen |= 1 << f
	}
	t.tradeRequest = r
	return true
}

// decodeBatch decodes the body of POST /api/markets/trades strictly
// (strictjson.Decode's rules and answers for a batchRequest) and returns its
// trades, and whether the body had them (a null or absent "trades" has
// none). A body of at most core.MaxBatchTrades flat trades is read from
// strictjson.ScanFlatArray's members; any other goes to Decode.
func decodeBatch(body []byte) (trades []tradeBody, present bool, err error) {
	if trades, ok := fastBatch(body); ok {
		return trades, true, nil
	}
	var b batchRequest
	if err := strictjson.Decode(body, &b); err != nil {
		return nil, false, err
	}
	if b.Trades == nil {
		return nil, false, nil
	}
	trades = make([]tradeBody, len(*b.Trades))
	for i := range trades {
		trades[i].tradeRequest = (*b.Trades)[i]
	}
	return trades, true, nil
}

// fastBatch decodes a batch's body when it is {"trades": [...]} of at
// most core.MaxBatchTrades trades that fromMembers takes, and reports
// whether it did.
func fastBatch(body []byte) ([]tradeBody, bool) {
	var buf [tradeFields]strictjson.Member
	// Room for the most a batch may hold, so that no item moves once its
	// pointers point into it; one more is Decode's to refuse.
	trades := make([]tradeBody, 0, core.MaxBatchTrades)
	ok := strictjson.ScanFlatArray(string(body), "trades", buf[:0], func(members []strictjson.Member) bool {
		if len(trades) == cap(trades) {
			return false
		}
		trades = trades[:len(trades)+1]
		return trades[len(trades)-1].fromMembers(members)
	})
	return trades, ok
}

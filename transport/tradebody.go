package transport

import (
	"slices"
	"strings"

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

// tradeStringFields counts tradeRequest's *string fields, tradeFields all
// of them.
const (
	tradeStringFields = 5
	tradeFields       = len(tradeMembers)
	tradeReasoning    = tradeFields - 1
)

// decode decodes a trade body strictly (strictjson.Decode's rules and
// answers) into t, which must be zero.
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
// did; t.tradeRequest is unchanged when it did not.
func (t *tradeBody) fromFlat(body []byte) bool {
	var buf [tradeFields]strictjson.Member
	// One string for all members; a reasoning gets its own below.
	members, ok := strictjson.ScanFlat(string(body), buf[:0])
	if !ok {
		return false
	}
	var r tradeRequest
	strs := [tradeStringFields]**string{&r.MarketID, &r.Side, &r.Type, &r.WorkflowMarketID, &r.Outcome}
	nums := [...]*strictjson.Number{&r.Shares, &r.MaxCost, &r.MinProceeds, &r.Amount, &r.ExpectSeq}
	var seen uint16
	for i := range members {
		m := &members[i]
		f := slices.Index(tradeMembers[:], m.Name)
		switch {
		case f < 0 || seen&(1<<f) != 0:
			return false // unknown or duplicate
		case f < tradeStringFields && !m.Number:
			t.text[f] = m.Value
			*strs[f] = &t.text[f]
		case f < tradeReasoning && f >= tradeStringFields && m.Number:
			*nums[f-tradeStringFields] = m.Num()
		case f == tradeReasoning && !m.Number:
			// The members' string is the whole body: a reasoning kept
			// by the engine must not hold it.
			r.Reasoning = strings.Clone(m.Value)
		default:
			return false // a number for a string or a string for a number
		}
		seen |= 1 << f
	}
	t.tradeRequest = r
	return true
}

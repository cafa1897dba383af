package baseline

import (
	"errors"
	"strings"
	"unicode/utf8"
	"unsafe"

	"marketd/core/money"
	"marketd/transport/strictjson"
)

// leastBody is a trade body of the reference shape (docs/API.md, "POST
// /api/markets/trade"), decoded strictly: strictjson.Decode's rules.
type leastBody struct {
	MarketID    *string           `json:"market_id"`
	Side        *string           `json:"side"`
	Shares      strictjson.Number `json:"shares"`
	Type        *string           `json:"type"`
	Reasoning   string            `json:"reasoning"`
	MaxCost     strictjson.Number `json:"max_cost"`
	MinProceeds strictjson.Number `json:"min_proceeds"`
	ExpectSeq   strictjson.Number `json:"expect_seq"`
	// text holds the strings the pointers above point to when the flat
	// path decoded the body: b's own room, so that they need no memory of
	// their own.
	text [4]string
}

// leastMembers are leastBody's members; a flat body with any other, or
// one twice, goes to strictjson.Decode for its answer.
var leastMembers = [...]string{"market_id", "side", "shares", "type", "reasoning", "max_cost", "min_proceeds", "expect_seq"}

// leastFieldError is a refusal of the body: a field's 400 (status 0), or a
// whole answer of its own (404 market not found).
type leastFieldError struct {
	field, reason string
	status        int
	code, message string
}

func (e *leastFieldError) Error() string {
	if e.status != 0 {
		return e.message
	}
	return e.field + ": " + e.reason
}

func fieldErr(field, reason string) error { return &leastFieldError{field: field, reason: reason} }

var errMarketNotFound = &leastFieldError{status: 404, code: "market_not_found", message: "Market not found"}

// decode decodes body into b, which must be zero: a flat body of known
// members is read in place (b's strings point into body), any other
// through strictjson.Decode.
func (b *leastBody) decode(body []byte) error {
	var buf [len(leastMembers)]strictjson.Member
	members, ok := strictjson.ScanFlat(unsafe.String(unsafe.SliceData(body), len(body)), buf[:0])
	if ok && b.fromMembers(members) {
		return nil
	}
	*b = leastBody{}
	if err := strictjson.Decode(body, b); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) && se.Field != "" {
			return fieldErr(se.Field, se.Reason)
		}
		return err
	}
	return nil
}

// fromMembers fills b from a flat body's members and reports whether they
// were leastBody's, each once and of its kind.
func (b *leastBody) fromMembers(members []strictjson.Member) bool {
	strs := [...]**string{&b.MarketID, &b.Side, nil, &b.Type}
	nums := [...]*strictjson.Number{2: &b.Shares, 5: &b.MaxCost, 6: &b.MinProceeds, 7: &b.ExpectSeq}
	var seen uint16
	for i := range members {
		mb := &members[i]
		f := -1
		for j, name := range leastMembers {
			if name == mb.Name {
				f = j
				break
			}
		}
		switch {
		case f < 0 || seen&(1<<f) != 0:
			return false
		case f < len(strs) && strs[f] != nil && !mb.Number:
			b.text[f] = mb.Value
			*strs[f] = &b.text[f]
		case f == 4 && !mb.Number:
			b.Reasoning = mb.Value
		case f < len(nums) && nums[f] != nil && mb.Number:
			*nums[f] = mb.Num()
		default:
			return false
		}
		seen |= 1 << f
	}
	return true
}

// order checks body's trade and fills o with it (but its account),
// returning its market: the checks and messages of docs/API.md, "POST
// /api/markets/trade", in its order.
func (h *leastTrade) order(body []byte, o *leastOrder) (*leastMarket, error) {
	var b leastBody
	if err := b.decode(body); err != nil {
		return nil, err
	}
	if b.MarketID == nil {
		return nil, fieldErr("market_id", "is required")
	}
	id, err := strictjson.UUID("market_id", *b.MarketID)
	if err != nil {
		return nil, fieldErr("market_id", "must be a UUID")
	}
	switch {
	case b.Side == nil:
		return nil, fieldErr("side", "is required")
	case *b.Side == "yes":
		o.side = 0
	case *b.Side == "no":
		o.side = 1
	default:
		return nil, fieldErr("side", "must be yes or no")
	}
	if o.shares, err = leastAmount("shares", b.Shares, false); err != nil {
		return nil, err
	}
	switch {
	case b.Type == nil || *b.Type == "buy":
		o.sell = false
	case *b.Type == "sell":
		o.sell = true
	default:
		return nil, fieldErr("type", "must be buy or sell")
	}
	if utf8.RuneCountInString(b.Reasoning) > leastMaxReasoning || !utf8.ValidString(b.Reasoning) {
		return nil, fieldErr("reasoning", "must be at most 1000 characters")
	}
	o.reasoning = strings.Clone(b.Reasoning) // kept past the request's bytes
	limit, limitField, other, otherField, kind := b.MaxCost, "max_cost", b.MinProceeds, "min_proceeds", "buy"
	if o.sell {
		limit, limitField, other, otherField, kind = b.MinProceeds, "min_proceeds", b.MaxCost, "max_cost", "sell"
	}
	if other.Set() {
		return nil, fieldErr(otherField, "does not apply to a "+kind)
	}
	o.limit = 0
	if limit.Set() {
		if o.limit, err = leastAmount(limitField, limit, true); err != nil {
			return nil, err
		}
	}
	o.expectSeq = -1
	if b.ExpectSeq.Set() {
		seq, err := b.ExpectSeq.Int("expect_seq")
		if err != nil || seq < 0 {
			return nil, fieldErr("expect_seq", "must not be negative")
		}
		o.expectSeq = seq
	}
	m := h.markets[id]
	if m == nil {
		return nil, errMarketNotFound
	}
	return m, nil
}

// leastAmount reads an amount of field, positive (or, with zero, from 0)
// and at most 1e9, with the message of docs/API.md.
func leastAmount(field string, n strictjson.Number, zero bool) (money.Amount, error) {
	reason := "must be positive and at most 1e9"
	if zero {
		reason = "must be from 0 to 1e9"
	}
	a, err := n.Amount(field)
	var se *strictjson.Error
	switch {
	case errors.As(err, &se) && se.Reason == "is out of range":
		return 0, fieldErr(field, reason)
	case errors.As(err, &se):
		return 0, fieldErr(field, se.Reason)
	case err != nil:
		return 0, err
	case a < 0 || a == 0 && !zero || a > leastMaxShares:
		return 0, fieldErr(field, reason)
	}
	return a, nil
}

package transport

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// The trade answer is the one answer on the hot path: encoding/json's
// reflection over its thirteen fields, four of them Marshalers whose output
// it then compacts, took about 2.4 us of the 29 us of server CPU per
// durable trade over HTTP (docs/PERFORMANCE.md, "Trade endpoint CPU per
// request"). appendTradeJSON writes the same bytes directly, for single
// trades, batch items and replayed stored answers alike; encoding/json stays
// the reference: TestTradeAnswerJSON compares the two on random and edge
// values, so a change to either side fails it.

// tradeAnswerBytes is the room for one encoded trade answer: a typical one
// is about 400 bytes.
const tradeAnswerBytes = 512

// WriteTrade answers 200 with a trade's answer (docs/API.md, "POST
// /api/markets/trade"), the bytes writeJSON would write for r's
// wire.Trade (TestTradeAnswerJSON holds the two equal).
// The answer is encoded straight into the response's body buffer, which
// fasthttp keeps from one request of a connection to the next, instead of
// into a buffer of its own that SetBody then copies. It is exported for
// bench/baseline's least-trade handler, so that the least a trade request
// does and marketd answer with one writer at one cost.
func WriteTrade(ctx *fasthttp.RequestCtx, r *core.TradeResult) error {
	buf := ctx.Response.SwapBody(nil)
	b, err := appendTradeJSON(buf[:0], r)
	if err != nil {
		ctx.Response.SwapBody(buf[:0])
		return err
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	// writeJSON's Encoder ends every answer with a newline.
	ctx.Response.SwapBody(append(b, '\n'))
	return nil
}

// appendTradeJSON appends r's answer as json.Marshal encodes
// tradeAnswer(r), written from r itself: building the wire.Trade first
// copied its 13 fields and named its side, type and currency through
// their tables. The error is json.Marshal's for a price that is not a
// finite number.
func appendTradeJSON(b []byte, r *core.TradeResult) ([]byte, error) {
	b = append(b, `{"trade_id":`...)
	b = appendJSONUUID(b, r.TradeID)
	b = append(b, `,"market_id":`...)
	b = appendJSONUUID(b, r.Market)
	b = append(b, `,"side":`...)
	b = appendJSONString(b, r.Side.String())
	b = append(b, `,"type":`...)
	b = appendJSONString(b, tradeType(r.Sell))
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, r.Currency.String())
	b = append(b, `,"shares":`...)
	b = r.Shares.AppendText(b)
	b = append(b, `,"cost":`...)
	b = r.Cost.AppendText(b)
	b = append(b, `,"vig":`...)
	b = r.Vig.AppendText(b)
	b = append(b, `,"balance_after":`...)
	b = r.BalanceAfter.AppendText(b)
	b = append(b, `,"price_yes_after":`...)
	var err error
	if b, err = appendJSONFloat(b, r.PriceYesAfter); err != nil {
		return nil, err
	}
	b = append(b, `,"price_no_after":`...)
	if b, err = appendJSONFloat(b, r.PriceNoAfter); err != nil {
		return nil, err
	}
	b = append(b, `,"created_at":"`...)
	b = appendTimestamp(b, r.Time.UnixNano())
	b = append(b, `","market_seq":`...)
	b = strconv.AppendUint(b, r.MarketSeq, 10)
	return append(b, '}'), nil
}

// hexPairs holds each byte's two lowercase hex digits, as uuid.UUID's
// text form writes them, the first in the low byte: stored little-endian,
// they are the text.
var hexPairs = func() (t [256]uint16) {
	const digits = "0123456789abcdef"
	for c := range t {
		t[c] = uint16(digits[c>>4]) | uint16(digits[c&0xf])<<8
	}
	return t
}()

// uuidDigits is where the two digits of each of a UUID's 16 bytes go in
// its quoted canonical text ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
var uuidDigits = [16]uint8{1, 3, 5, 7, 10, 12, 15, 17, 20, 22, 25, 27, 29, 31, 33, 35}

// appendJSONUUID appends id as a JSON string in its canonical text form
// (uuid.UUID's MarshalText). One loop over the 16 bytes, each byte's two
// digits copied from a table: five hex.Encode calls, one per group, took
// about 385 instructions a UUID, twice per trade answer
// (docs/PERFORMANCE.md, "The trade request's handler, instruction by
// instruction").
func appendJSONUUID(b []byte, id uuid.UUID) []byte {
	var s [38]byte
	s[0], s[9], s[14], s[19], s[24], s[37] = '"', '-', '-', '-', '-', '"'
	for i, c := range id {
		binary.LittleEndian.PutUint16(s[uuidDigits[i]:], hexPairs[c])
	}
	return append(b, s[:]...)
}

// appendJSONString appends s as a JSON string. The answers' strings are
// names from fixed tables (yes, buy, kp); any byte encoding/json would
// escape (a control, a quote, a backslash, <, >, & or non-ASCII) sends the
// string through encoding/json instead.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlainByte[s[i]] {
			q, err := json.Marshal(s)
			if err != nil {
				panic(fmt.Sprintf("BUG: encode string %q: %v", s, err))
			}
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonPlainByte is true for the bytes encoding/json writes as they are in a
// string: printable ASCII but the quote, the backslash, <, > and &. One
// table lookup a byte instead of seven comparisons.
var jsonPlainByte = func() (plain [256]bool) {
	for c := ' '; c <= '~'; c++ {
		plain[c] = true
	}
	for _, c := range `"\\<>&` {
		plain[c] = false
	}
	return plain
}()

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest decimal that reads back as f, in exponent form below 1e-6 and
// from 1e21 up, with the exponent's leading zero dropped (encoding/json,
// floatEncoder).
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

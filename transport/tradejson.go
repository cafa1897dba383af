package transport

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/wire"
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

// writeTrade answers 200 with a trade's answer, the bytes writeJSON
// would write for tradeAnswer(r). The answer is encoded straight into the
// response's body buffer, which fasthttp keeps from one request of a
// connection to the next, instead of into a buffer of its own that
// SetBody then copies.
func writeTrade(ctx *fasthttp.RequestCtx, r *core.TradeResult) error {
	ans := tradeAnswer(r)
	buf := ctx.Response.SwapBody(nil)
	b, err := appendTradeJSON(buf[:0], &ans)
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

// appendTradeJSON appends a as json.Marshal encodes it. The error is
// json.Marshal's for a price that is not a finite number.
func appendTradeJSON(b []byte, a *wire.Trade) ([]byte, error) {
	b = append(b, `{"trade_id":`...)
	b = appendJSONUUID(b, a.TradeID)
	b = append(b, `,"market_id":`...)
	b = appendJSONUUID(b, a.MarketID)
	b = append(b, `,"side":`...)
	b = appendJSONString(b, a.Side)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, a.Type)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, a.Currency)
	b = append(b, `,"shares":`...)
	b = a.Shares.AppendText(b)
	b = append(b, `,"cost":`...)
	b = a.Cost.AppendText(b)
	b = append(b, `,"vig":`...)
	b = a.Vig.AppendText(b)
	b = append(b, `,"balance_after":`...)
	b = a.BalanceAfter.AppendText(b)
	b = append(b, `,"price_yes_after":`...)
	var err error
	if b, err = appendJSONFloat(b, a.PriceYesAfter); err != nil {
		return nil, err
	}
	b = append(b, `,"price_no_after":`...)
	if b, err = appendJSONFloat(b, a.PriceNoAfter); err != nil {
		return nil, err
	}
	b = append(b, `,"created_at":"`...)
	b = time.Unix(0, int64(a.CreatedAt)).UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","market_seq":`...)
	b = strconv.AppendUint(b, a.MarketSeq, 10)
	return append(b, '}'), nil
}

// appendJSONUUID appends id as a JSON string in its canonical text form
// (uuid.UUID's MarshalText).
func appendJSONUUID(b []byte, id uuid.UUID) []byte {
	var s [38]byte
	s[0], s[9], s[14], s[19], s[24], s[37] = '"', '-', '-', '-', '-', '"'
	hex.Encode(s[1:9], id[0:4])
	hex.Encode(s[10:14], id[4:6])
	hex.Encode(s[15:19], id[6:8])
	hex.Encode(s[20:24], id[8:10])
	hex.Encode(s[25:37], id[10:16])
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

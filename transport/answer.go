package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// The stored answer of an idempotent request is opaque to core: transport
// chooses its bytes. A trade's JSON answer is about 400 bytes, which more
// than doubled each record (290 bytes) and cost a tenth of the trade
// endpoint's throughput in the log's writes; so transport stores the
// answer's fields in a compact binary form (about 100 bytes) and renders
// the JSON from them again on a replay. encoding/json writes the same
// bytes for the same values, so the replay is the first answer byte for
// byte (TestStoredAnswerRoundTrip, and the end-to-end retry tests).
//
// Layout: a kind byte, a flags byte, then the kind's fields; integers are
// varints, prices float64 bits little-endian, IDs 16 bytes.
const (
	answerTrade = 'T'
	answerSplit = 'S'
	// answerJSON: the JSON answer itself follows, as written (the routes
	// with an answerFunc, whose answers are small and rare).
	answerJSON = 'J'
	// answerNewline: the JSON ends with a newline, as writeJSON writes it
	// (single answers); batch items have none.
	answerNewline = 1
)

var errBadAnswer = errors.New("transport: malformed stored answer")

// storeTrade encodes a trade's answer for its record.
func storeTrade(r *core.TradeResult, newline bool) []byte {
	b := make([]byte, 0, 112)
	b = append(b, answerTrade, flags(newline))
	b = append(b, r.TradeID[:]...)
	b = append(b, r.Market[:]...)
	b = append(b, byte(r.Side), boolByte(r.Sell), byte(r.Currency))
	b = binary.AppendVarint(b, int64(r.Shares))
	b = binary.AppendVarint(b, int64(r.Cost))
	b = binary.AppendVarint(b, int64(r.Vig))
	b = binary.AppendVarint(b, int64(r.BalanceAfter))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.PriceYesAfter))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.PriceNoAfter))
	b = binary.AppendVarint(b, r.Time.UnixNano())
	return binary.AppendUvarint(b, r.MarketSeq)
}

// storeSplit encodes a split's or a merge's answer for its record.
func storeSplit(r *core.SplitResult) []byte {
	b := make([]byte, 0, 96)
	b = append(b, answerSplit, answerNewline)
	b = append(b, r.Market[:]...)
	b = append(b, boolByte(r.Merge), byte(r.Currency))
	for _, a := range []money.Amount{r.Amount, r.Cost, r.Vig, r.BalanceAfter, r.YesShares, r.NoShares} {
		b = binary.AppendVarint(b, int64(a))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.PriceYesAfter))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.PriceNoAfter))
	return binary.AppendUvarint(b, r.MarketSeq)
}

func flags(newline bool) byte {
	if newline {
		return answerNewline
	}
	return 0
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// storeJSON encodes a JSON answer for its record.
func storeJSON(answer []byte) []byte {
	return append([]byte{answerJSON}, answer...)
}

// renderStored returns the JSON answer a stored answer was made from.
func renderStored(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == answerJSON {
		return b[1:], nil
	}
	d := answerDecoder{b: b}
	kind, fl := d.byte(), d.byte()
	var out []byte
	switch kind {
	case answerTrade:
		var r core.TradeResult
		r.TradeID, r.Market = d.uuid(), d.uuid()
		r.Side, r.Sell, r.Currency = core.Side(d.byte()), d.byte() == 1, money.Currency(d.byte())
		r.Shares, r.Cost, r.Vig, r.BalanceAfter = d.amount(), d.amount(), d.amount(), d.amount()
		r.PriceYesAfter, r.PriceNoAfter = d.float(), d.float()
		r.Time = time.Unix(0, d.varint())
		r.MarketSeq = d.uvarint()
		if err := d.done(kind); err != nil {
			return nil, err
		}
		// As the trade handler writes it (WriteTrade).
		var err error
		if out, err = appendTradeJSON(nil, &r); err != nil {
			return nil, fmt.Errorf("%w: %w", errBadAnswer, err)
		}
		out = append(out, '\n')
	case answerSplit:
		var r core.SplitResult
		r.Market = d.uuid()
		r.Merge, r.Currency = d.byte() == 1, money.Currency(d.byte())
		r.Amount, r.Cost, r.Vig, r.BalanceAfter, r.YesShares, r.NoShares = d.amount(), d.amount(), d.amount(), d.amount(), d.amount(), d.amount()
		r.PriceYesAfter, r.PriceNoAfter = d.float(), d.float()
		r.MarketSeq = d.uvarint()
		if err := d.done(kind); err != nil {
			return nil, err
		}
		out = encodeAnswer(splitMergeAnswer(&r))
	default:
		return nil, fmt.Errorf("%w: kind %d", errBadAnswer, kind)
	}
	if fl&answerNewline != 0 {
		return out, nil
	}
	return trimNewline(out), nil
}

// answerDecoder reads a stored answer; the first error sticks.
type answerDecoder struct {
	b   []byte
	off int
	err error
}

func (d *answerDecoder) take(n int) []byte {
	if d.err != nil || len(d.b)-d.off < n {
		d.err = errBadAnswer
		return make([]byte, n)
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// done returns the error of a stored answer of kind that did not read
// whole: a decoding error, or bytes left over.
func (d *answerDecoder) done(kind byte) error {
	if d.err != nil || d.off != len(d.b) {
		return fmt.Errorf("%w: kind %c, %d of %d bytes read", errBadAnswer, kind, d.off, len(d.b))
	}
	return nil
}

func (d *answerDecoder) byte() byte { return d.take(1)[0] }

func (d *answerDecoder) uuid() (id uuid.UUID) {
	copy(id[:], d.take(16))
	return id
}

func (d *answerDecoder) float() float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(d.take(8)))
}

func (d *answerDecoder) varint() int64 { return readVarint(d, binary.Varint) }

func (d *answerDecoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

// readVarint reads one varint with read (binary.Varint or binary.Uvarint).
func readVarint[T int64 | uint64](d *answerDecoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b[d.off:])
	if n <= 0 {
		d.err = errBadAnswer
		return 0
	}
	d.off += n
	return v
}

func (d *answerDecoder) amount() money.Amount { return money.Amount(d.varint()) }

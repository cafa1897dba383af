package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// decoder reads fields from b in order. The first error sticks: later reads
// return zero values and list counts of zero, so a failed decode unwinds
// without checks at every call.
type decoder struct {
	b       []byte
	off     int
	err     error  // the first error; errShort until error makes its message
	shortAt int    // with err errShort: where the input ended inside a field
	badAt   int    // with err errBadByte: the byte out of range, or the input's end
	badWhat string // with err errBadByte: what it is, for the message
	badFlag bool   // with err errBadByte: a flag's byte, not an enum's
	version byte   // the format version of b: later fields are absent

	spareAccount *accountBlock      // for the first account change that needs one
	blocks       []accountBlock     // for the others, when the record has several
	infos        []core.AccountInfo // for the account changes' infos; empty: a new one each
	spareBook    *[1]core.Book      // for the first single-book market change
	strs         *Strings           // where strings are copied; nil: one allocation each
}

// fail records the first error, at the offset of the field that began back
// bytes before the current one, and stops further reads.
func (d *decoder) fail(what string, back int) {
	if d.err != nil {
		return
	}
	d.err = fmt.Errorf("record: decode record: %s at byte %d: %w", what, d.off-back, ErrCorrupt)
	d.off = len(d.b)
}

// errShort stands in d.err for "truncated at byte shortAt" until error
// makes the message: building it in short would make short, and byte and
// uuid that call it, a call each. As calls, these two were a twentieth of
// a replayed record's instructions, and their callers reloaded around each
// call what it might have changed (cachegrind); inlined, they are a load,
// a compare and an add.
var errShort = errors.New("record: decode record: truncated")

// short records that the input ended inside the field at d.off, unless an
// error came first, and stops further reads.
func (d *decoder) short() {
	if d.err == nil {
		d.err, d.shortAt = errShort, d.off
	}
	d.off = len(d.b)
}

// errBadByte stands in d.err, as errShort does, for a flag's or an enum's
// byte out of range at badAt, until error makes the message: so flag,
// currency and side hold no call and are inlined. With the message built
// in them (a call of fmt.Sprintf), each was a call per field, a
// twenty-fifth of a replayed trade record's instructions
// (docs/PERFORMANCE.md, "Replay, a fourth pass").
var errBadByte = errors.New("record: decode record: byte out of range")

// badByte records that the byte at d.off is not a valid what (a flag's
// when flag), or that the input ended before it (error tells which),
// unless an error came first, and stops further reads.
func (d *decoder) badByte(what string, flag bool) {
	if d.err == nil {
		d.err, d.badAt, d.badWhat, d.badFlag = errBadByte, d.off, what, flag
	}
	d.off = len(d.b)
}

// error returns the first error, nil when none.
func (d *decoder) error() error {
	switch d.err {
	case errShort:
		return fmt.Errorf("record: decode record: truncated at byte %d: %w", d.shortAt, ErrCorrupt)
	case errBadByte:
		if d.badAt >= len(d.b) {
			return fmt.Errorf("record: decode record: truncated at byte %d: %w", d.badAt, ErrCorrupt)
		}
		if d.badFlag {
			return fmt.Errorf("record: decode record: %s: flag byte %d at byte %d: %w", d.badWhat, d.b[d.badAt], d.badAt, ErrCorrupt)
		}
		return fmt.Errorf("record: decode record: unknown %s %d at byte %d: %w", d.badWhat, d.b[d.badAt], d.badAt, ErrCorrupt)
	}
	return d.err
}

func (d *decoder) byte() byte {
	i := d.off
	if i >= len(d.b) {
		d.short()
		return 0
	}
	d.off = i + 1
	return d.b[i]
}

// flag reads a presence or boolean byte, which must be 0 or 1.
func (d *decoder) flag(what string) bool {
	if i := d.off; i < len(d.b) && d.b[i] <= flagPresent {
		d.off = i + 1
		return d.b[i] == flagPresent
	}
	d.badByte(what, true)
	return false
}

func (d *decoder) currency() money.Currency {
	if i := d.off; i < len(d.b) && money.Currency(d.b[i]).Valid() {
		d.off = i + 1
		return money.Currency(d.b[i])
	}
	d.badByte("currency", false)
	return 0
}

func (d *decoder) side() core.Side {
	if i := d.off; i < len(d.b) && validSide(core.Side(d.b[i])) {
		d.off = i + 1
		return core.Side(d.b[i])
	}
	d.badByte("side", false)
	return 0
}

// uvarint reads a uvarint. It rejects one that overflows 64 bits or is not
// minimal (ends with a zero byte after the first): that keeps the encoding
// canonical, so that decoding then encoding gives back the same bytes.
//
// Most varints of a record are amounts, times and seqs of 2 to 9 bytes,
// whose lengths vary from field to field: a loop over the bytes
// mispredicts its exit at nearly every varint, and varints were the
// largest part of replay's decoding (CPU profile of BenchmarkRecover).
// With 8 bytes left, the length is found from one 8-byte load and the
// groups of 7 bits are put together without a branch per byte. It is one
// function, not a small one calling a larger one for varints of more than
// a byte (neither was inlined): the second call and its frame were half
// of the instructions of a replayed record's varints (cachegrind).
func (d *decoder) uvarint() uint64 {
	b, i := d.b, d.off
	if len(b)-i >= 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if x&0x80 == 0 { // one byte: the common case, minimal by construction
			d.off = i + 1
			return x & 0x7f
		}
		if stop := ^x & 0x8080808080808080; stop != 0 {
			end := bits.TrailingZeros64(stop) + 1 // 8 times the bytes up to the last one
			if x>>(end-8)&0xff != 0 {             // else the last byte is zero: not minimal
				d.off = i + end/8
				return join7(x & (^uint64(0) >> (64 - end)))
			}
		} else if len(b)-i > 8 {
			if c := b[i+8]; c < 0x80 && c != 0 { // 9 bytes: a time in nanoseconds
				d.off = i + 9
				return join7(x) | uint64(c)<<56
			}
		}
	} else if i < len(b) && b[i] < 0x80 {
		d.off = i + 1
		return uint64(b[i])
	}
	return d.uvarintSlow()
}

// join7 puts together the low 7 bits of each byte of x, least significant
// first: the value of a varint of up to 8 bytes.
func join7(x uint64) uint64 {
	x &= 0x7f7f7f7f7f7f7f7f
	x = x&0x007f007f007f007f | x&0x7f007f007f007f00>>1
	x = x&0x00003fff00003fff | x&0x3fff00003fff0000>>2
	return x&0x000000000fffffff | x&0x0fffffff00000000>>4
}

// uvarintSlow is uvarint a byte at a time: near the end of the input, for
// 10-byte varints, and for every error.
func (d *decoder) uvarintSlow() uint64 {
	b, i := d.b, d.off
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if i >= len(b) {
			d.fail("truncated varint", 0)
			return 0
		}
		c := b[i]
		i++
		if c < 0x80 {
			if (c == 0 && shift > 0) || (shift == 63 && c > 1) {
				d.fail("malformed varint", 0)
				return 0
			}
			d.off = i
			return v | uint64(c)<<shift
		}
		v |= uint64(c&0x7f) << shift
	}
	d.fail("malformed varint", 0)
	return 0
}

// oneByteUvarint reads a uvarint of one byte (ok), and nothing when the
// next is longer or there is none. A count or a length is nearly always
// one byte: read by count and length with this, inlined, before a call of
// uvarint.
func (d *decoder) oneByteUvarint() (v uint64, ok bool) {
	if i := d.off; i < len(d.b) && d.b[i] < 0x80 {
		d.off = i + 1
		return uint64(d.b[i]), true
	}
	return 0, false
}

// zeros skips the next n bytes, 1 <= n <= 8, when they are all zero, and
// reports whether it did: the zero counts (and absent flags) of a run of
// empty lists, which Append writes at once for a trade's record. A count
// of zero is always valid, so skipping them decodes what reading each
// would; reading each was a call of count per list (docs/PERFORMANCE.md,
// "Replay, a fourth pass"). The bytes are read with one 8-byte load, the
// input's last 8 when fewer are left. It reports false when it does not
// skip them, and the caller reads them one by one: so it does after an
// error, which leaves no byte.
func (d *decoder) zeros(n int) bool {
	b, i := d.b, d.off
	j := min(i, len(b)-8) // where the 8 bytes loaded start; the skipped ones i-j bytes in
	if j < 0 || len(b)-i < n || binary.LittleEndian.Uint64(b[j:])>>(8*(i-j))<<(64-8*n) != 0 {
		return false
	}
	d.off = i + n
	return true
}

// varint reads a zig-zag encoded varint.
func (d *decoder) varint() int64 {
	ux := d.uvarint()
	return int64(ux>>1) ^ -int64(ux&1)
}

func (d *decoder) amount() money.Amount { return money.Amount(d.varint()) }

func (d *decoder) uint64LE() uint64 {
	if len(d.b)-d.off < 8 {
		d.fail("truncated", 0)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *decoder) uuid() uuid.UUID {
	i := d.off
	if i+uuidSize > len(d.b) {
		d.short()
		return uuid.Nil
	}
	d.off = i + uuidSize
	return uuid.UUID(d.b[i:])
}

func (d *decoder) hash() (h [hashSize]byte) {
	if len(d.b)-d.off < hashSize {
		d.fail("truncated hash", 0)
		return h
	}
	copy(h[:], d.b[d.off:])
	d.off += hashSize
	return h
}

// smallCount is count, inline, for a count of one byte whose items fit
// the bytes left, given the smallest encoding of one item; otherwise it
// reads nothing and returns -1, and the caller calls count. The counts of
// a trade's record are such, and count itself costs too much to inline (a
// call of fmt.Sprintf in it): as calls, they were a twentieth of a
// replayed trade record's instructions (docs/PERFORMANCE.md, "Replay, a
// fourth pass").
func (d *decoder) smallCount(minItemBytes int) int {
	if i := d.off; i < len(d.b) && d.b[i] < 0x80 && int(d.b[i])*minItemBytes < len(d.b)-i {
		d.off = i + 1
		return int(d.b[i])
	}
	return -1
}

// count reads a list length and checks it against MaxListItems and against
// the bytes left, given the smallest encoding of one item.
func (d *decoder) count(minItemBytes int, what string) int {
	start := d.off
	n, ok := d.oneByteUvarint()
	if !ok {
		n = d.uvarint()
	}
	if d.err != nil {
		return 0
	}
	// n*minItemBytes cannot overflow once n is within MaxListItems; a
	// division here cost more than the rest of count.
	if n > MaxListItems || n*uint64(minItemBytes) > uint64(len(d.b)-d.off) {
		d.fail(fmt.Sprintf("%d %s do not fit", n, what), d.off-start)
		return 0
	}
	return int(n)
}

// length reads a string or byte-slice length and checks it against
// MaxStringBytes and the bytes left.
func (d *decoder) length(what string) int {
	start := d.off
	n, ok := d.oneByteUvarint()
	if !ok {
		n = d.uvarint()
	}
	if d.err != nil {
		return 0
	}
	if n > MaxStringBytes || n > uint64(len(d.b)-d.off) {
		d.fail(fmt.Sprintf("%s of %d bytes does not fit", what, n), d.off-start)
		return 0
	}
	return int(n)
}

func (d *decoder) string(what string) string {
	n := d.length(what)
	if n == 0 {
		return ""
	}
	var s string
	if d.strs != nil {
		s = d.strs.copy(d.b[d.off : d.off+n])
	} else {
		s = string(d.b[d.off : d.off+n])
	}
	d.off += n
	return s
}

func (d *decoder) bytes(what string) []byte {
	n := d.length(what)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.b[d.off:])
	d.off += n
	return b
}

package money

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Amount is a quantity in micro-units: 1 unit is 1,000,000.
type Amount int64

// Scale is the number of micro-units in one whole unit.
const Scale = 1_000_000

// ErrOverflow reports arithmetic whose exact result does not fit an Amount.
var ErrOverflow = errors.New("money: overflow")

// Units returns n whole units as an Amount. It panics when n does not fit,
// which only a programming error can cause.
func Units(n int64) Amount {
	a, err := Amount(n).MulInt(Scale)
	if err != nil {
		panic(fmt.Sprintf("BUG: money.Units(%d): %v", n, err))
	}
	return a
}

// Add returns a+b, or ErrOverflow.
func (a Amount) Add(b Amount) (Amount, error) {
	s := a + b
	// Overflow happened when both operands share a sign the sum lacks.
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return 0, fmt.Errorf("%w: %d + %d", ErrOverflow, a, b)
	}
	return s, nil
}

// Sub returns a-b, or ErrOverflow.
func (a Amount) Sub(b Amount) (Amount, error) {
	if b == math.MinInt64 {
		return 0, fmt.Errorf("%w: %d - %d", ErrOverflow, a, b)
	}
	return a.Add(-b)
}

// MulInt returns a*n, or ErrOverflow.
func (a Amount) MulInt(n int64) (Amount, error) {
	if a == 0 || n == 0 {
		return 0, nil
	}
	p := int64(a) * n
	if p/n != int64(a) || (a == -1 && n == math.MinInt64) || (n == -1 && a == math.MinInt64) {
		return 0, fmt.Errorf("%w: %d * %d", ErrOverflow, a, n)
	}
	return Amount(p), nil
}

// MulDivFloor returns floor(a*num/den) computed exactly in 128 bits, for
// non-negative a and num and positive den; it is how shares of an amount are
// taken pro rata without ever rounding in the taker's favour.
func (a Amount) MulDivFloor(num, den Amount) (Amount, error) {
	if a < 0 || num < 0 || den <= 0 {
		return 0, fmt.Errorf("money: MulDivFloor(%d, %d, %d): operands out of range", a, num, den)
	}
	hi, lo := bits.Mul64(uint64(a), uint64(num))
	if hi >= uint64(den) {
		return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, a, num, den)
	}
	q, _ := bits.Div64(hi, lo, uint64(den))
	if q > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %d * %d / %d", ErrOverflow, a, num, den)
	}
	return Amount(q), nil
}

// Float returns the amount in whole units as a float64, for display and
// pricing input only; money is never accumulated in floats.
func (a Amount) Float() float64 { return float64(a) / Scale }

// String formats the amount in whole units with up to six decimals and no
// trailing zeros, e.g. "12.5" or "-0.000001".
func (a Amount) String() string { return string(a.AppendText(nil)) }

// AppendText appends the String form of a to b.
func (a Amount) AppendText(b []byte) []byte {
	u := uint64(a)
	if a < 0 {
		b = append(b, '-')
		u = -u // two's complement also handles math.MinInt64
	}
	b = strconv.AppendUint(b, u/Scale, 10)
	frac := u % Scale
	if frac == 0 {
		return b
	}
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// MarshalJSON encodes the amount as a JSON number in whole units with at
// most six decimals, exactly: no float rounding happens on the way out.
func (a Amount) MarshalJSON() ([]byte, error) { return a.AppendText(nil), nil }

// UnmarshalJSON decodes a JSON number with at most six decimals exactly.
func (a *Amount) UnmarshalJSON(data []byte) error {
	v, err := Parse(string(data))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

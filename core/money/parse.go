package money

import (
	"errors"
	"fmt"
	"math"
)

// ErrSyntax reports text that is not a decimal number of whole units with at
// most six decimals.
var ErrSyntax = errors.New("money: not a number with at most 6 decimals")

// Parse reads a decimal number of whole units, such as "12", "-0.5" or
// "1e3", into an exact Amount. More than six significant decimals, a value
// that does not fit, or anything that is not a JSON number is an error; no
// float is involved, so "0.1" is exactly 100000 micro-units.
func Parse(s string) (Amount, error) {
	mant, exp, neg, err := splitDecimal(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", err, s)
	}
	// mant * 10^exp in units; shift to micro-units.
	exp += 6
	for exp < 0 {
		if mant%10 != 0 {
			return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
		}
		mant /= 10
		exp++
	}
	for ; exp > 0; exp-- {
		if mant > math.MaxInt64/10 {
			return 0, fmt.Errorf("%w: %q", ErrOverflow, s)
		}
		mant *= 10
	}
	if neg {
		return Amount(-mant), nil
	}
	return Amount(mant), nil
}

// splitDecimal parses JSON number syntax into a non-negative integer
// mantissa, a base-10 exponent and a sign. Trailing zeros of the fraction
// are dropped so that "1.5000000" is accepted like "1.5".
func splitDecimal(s string) (mant int64, exp int, neg bool, err error) {
	p := decimalParser{s: s}
	if p.peek('-') {
		neg = true
		p.i++
	}
	if err := p.integer(); err != nil {
		return 0, 0, false, err
	}
	if err := p.fraction(); err != nil {
		return 0, 0, false, err
	}
	e, err := p.exponent()
	if err != nil {
		return 0, 0, false, err
	}
	if p.i != len(s) {
		return 0, 0, false, ErrSyntax
	}
	exp = p.exp + e
	if p.mant == 0 {
		exp = 0
	}
	if exp > 40 || exp < -40 {
		return 0, 0, false, ErrOverflow
	}
	return p.mant, exp, neg, nil
}

// decimalParser reads the parts of a JSON number from s at i, gathering
// its significant digits into mant and the fraction's length into exp.
type decimalParser struct {
	s    string
	i    int
	mant int64
	exp  int
}

func (p *decimalParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

func (p *decimalParser) digitAt(i int) bool { return i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' }

func (p *decimalParser) addDigit(c byte) error {
	if p.mant == 0 && c == '0' {
		return nil
	}
	d := int64(c - '0')
	if p.mant > (math.MaxInt64-d)/10 {
		return ErrOverflow
	}
	p.mant = p.mant*10 + d
	return nil
}

// integer reads "0" or a digit run without a leading zero.
func (p *decimalParser) integer() error {
	if p.peek('0') {
		p.i++
		return nil
	}
	start := p.i
	for ; p.digitAt(p.i); p.i++ {
		if err := p.addDigit(p.s[p.i]); err != nil {
			return err
		}
	}
	if p.i == start {
		return ErrSyntax
	}
	return nil
}

// fraction reads an optional "." and at least one digit.
func (p *decimalParser) fraction() error {
	if !p.peek('.') {
		return nil
	}
	p.i++
	start, end := p.i, p.i
	for p.digitAt(end) {
		end++
	}
	if end == start {
		return ErrSyntax
	}
	last := end
	for last > start && p.s[last-1] == '0' {
		last--
	}
	for ; p.i < last; p.i++ {
		if err := p.addDigit(p.s[p.i]); err != nil {
			return err
		}
		p.exp--
	}
	p.i = end
	return nil
}

// exponent reads an optional "e" or "E", a sign and at least one digit.
func (p *decimalParser) exponent() (int, error) {
	if !p.peek('e') && !p.peek('E') {
		return 0, nil
	}
	p.i++
	neg := p.peek('-')
	if neg || p.peek('+') {
		p.i++
	}
	if !p.digitAt(p.i) {
		return 0, ErrSyntax
	}
	e := 0
	for ; p.digitAt(p.i); p.i++ {
		if e > 1000 {
			return 0, ErrOverflow
		}
		e = e*10 + int(p.s[p.i]-'0')
	}
	if neg {
		e = -e
	}
	return e, nil
}

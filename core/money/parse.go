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
	i := 0
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	start := i
	digits := 0
	addDigit := func(c byte) error {
		if mant == 0 && c == '0' {
			return nil
		}
		d := int64(c - '0')
		if mant > (math.MaxInt64-d)/10 {
			return ErrOverflow
		}
		mant = mant*10 + d
		digits++
		return nil
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if err := addDigit(s[i]); err != nil {
				return 0, 0, false, err
			}
			i++
		}
	}
	if i == start {
		return 0, 0, false, ErrSyntax
	}
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		end := i
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		if end == fracStart {
			return 0, 0, false, ErrSyntax
		}
		last := end
		for last > fracStart && s[last-1] == '0' {
			last--
		}
		for ; i < last; i++ {
			if err := addDigit(s[i]); err != nil {
				return 0, 0, false, err
			}
			exp--
		}
		i = end
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, 0, false, ErrSyntax
		}
		e := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if e > 1000 {
				return 0, 0, false, ErrOverflow
			}
			e = e*10 + int(s[i]-'0')
			i++
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) {
		return 0, 0, false, ErrSyntax
	}
	if mant == 0 {
		exp = 0
	}
	if exp > 40 || exp < -40 {
		return 0, 0, false, ErrOverflow
	}
	return mant, exp, neg, nil
}

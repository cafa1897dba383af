package money

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Amount
		err  error
	}{
		{"0", 0, nil},
		{"1", 1_000_000, nil},
		{"-1", -1_000_000, nil},
		{"0.1", 100_000, nil},
		{"12.345678", 12_345_678, nil},
		{"0.000001", 1, nil},
		{"1.50000000", 1_500_000, nil},
		{"1e3", 1_000_000_000, nil},
		{"1E-6", 1, nil},
		{"2.5e-1", 250_000, nil},
		{"9223372036854.775807", math.MaxInt64, nil},
		{"-9223372036854.775807", -math.MaxInt64, nil},
		{"0.0000001", 0, ErrSyntax},
		{"1.2345678", 0, ErrSyntax},
		{"1e-7", 0, ErrSyntax},
		{"9223372036854.775808", 0, ErrOverflow},
		{"1e20", 0, ErrOverflow},
		{"1e999999", 0, ErrOverflow},
		{"", 0, ErrSyntax},
		{"-", 0, ErrSyntax},
		{"01", 0, ErrSyntax},
		{"1.", 0, ErrSyntax},
		{".5", 0, ErrSyntax},
		{"+1", 0, ErrSyntax},
		{"1e", 0, ErrSyntax},
		{"NaN", 0, ErrSyntax},
		{"Infinity", 0, ErrSyntax},
		{"\"1\"", 0, ErrSyntax},
		{"1 ", 0, ErrSyntax},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse(%q) = %d, %v; want error %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	cases := []struct {
		in   Amount
		want string
	}{
		{0, "0"}, {1, "0.000001"}, {-1, "-0.000001"}, {1_500_000, "1.5"}, {-12_000_000, "-12"},
		{math.MaxInt64, "9223372036854.775807"}, {math.MinInt64, "-9223372036854.775808"},
	}
	for _, tc := range cases {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("Amount(%d).String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	type doc struct {
		A Amount `json:"a"`
	}
	for _, a := range []Amount{0, 1, -1, 123_456_789, math.MaxInt64, -math.MaxInt64} {
		b, err := json.Marshal(doc{a})
		if err != nil {
			t.Fatal(err)
		}
		var back doc
		if err := json.Unmarshal(b, &back); err != nil || back.A != a {
			t.Fatalf("%d -> %s -> %d, %v", a, b, back.A, err)
		}
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"a":0.1234567}`), &d); err == nil {
		t.Fatal("seven decimals accepted")
	}
}

func TestCheckedArithmetic(t *testing.T) {
	if _, err := Amount(math.MaxInt64).Add(1); !errors.Is(err, ErrOverflow) {
		t.Errorf("MaxInt64+1: %v", err)
	}
	if _, err := Amount(math.MinInt64).Sub(1); !errors.Is(err, ErrOverflow) {
		t.Errorf("MinInt64-1: %v", err)
	}
	if _, err := Amount(0).Sub(math.MinInt64); !errors.Is(err, ErrOverflow) {
		t.Errorf("0-MinInt64: %v", err)
	}
	if _, err := Amount(math.MaxInt64 / 2).MulInt(3); !errors.Is(err, ErrOverflow) {
		t.Errorf("mul: %v", err)
	}
	if v, err := Amount(-5).Add(3); err != nil || v != -2 {
		t.Errorf("-5+3 = %d, %v", v, err)
	}
	// MulDivFloor agrees with big-integer arithmetic where the result fits.
	for _, c := range [][3]int64{{7, 3, 2}, {math.MaxInt64, math.MaxInt64, math.MaxInt64}, {1e15, 1e15, 3e15}, {5, 0, 1}} {
		got, err := Amount(c[0]).MulDivFloor(Amount(c[1]), Amount(c[2]))
		want := new(big.Int).Mul(big.NewInt(c[0]), big.NewInt(c[1]))
		want.Quo(want, big.NewInt(c[2]))
		if err != nil || big.NewInt(int64(got)).Cmp(want) != 0 {
			t.Errorf("MulDivFloor%v = %d, %v; want %s", c, got, err, want)
		}
	}
	if _, err := Amount(math.MaxInt64).MulDivFloor(2, 1); !errors.Is(err, ErrOverflow) {
		t.Errorf("MulDivFloor overflow: %v", err)
	}
}

// FuzzParse checks that whatever Parse accepts is exact: formatting it and
// parsing again gives the same amount, and it agrees with big.Rat.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-0.000001", "1e3", "9223372036854.775807", "1.2345678", "01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(a.String())
		if err != nil || back != a {
			t.Fatalf("Parse(%q) = %d; String %q parses to %d, %v", s, a, a.String(), back, err)
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("Parse accepted %q, which big.Rat rejects", s)
		}
		if r.Mul(r, big.NewRat(Scale, 1)).Cmp(new(big.Rat).SetInt64(int64(a))) != 0 {
			t.Fatalf("Parse(%q) = %d micro-units, big.Rat disagrees", s, a)
		}
	})
}

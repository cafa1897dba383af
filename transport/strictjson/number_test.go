package strictjson_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"marketd/core/money"
	"marketd/transport/strictjson"
)

func TestNumberConversions(t *testing.T) {
	const (
		required = "is required"
		decimals = "must have at most 6 decimal places"
		rng      = "is out of range"
		integer  = "must be an integer"
	)
	tests := []struct {
		lit       string // "" for an absent Number
		amount    money.Amount
		amountErr string
		float     float64
		floatErr  string
		integer   int64
		intErr    string
	}{
		{lit: "", amountErr: required, floatErr: required, intErr: required},
		{lit: "0", amount: 0, float: 0, integer: 0},
		{lit: "-0", amount: 0, float: math.Copysign(0, -1), integer: 0},
		{lit: "12", amount: 12_000_000, float: 12, integer: 12},
		{lit: "-7", amount: -7_000_000, float: -7, integer: -7},
		{lit: "10.5", amount: 10_500_000, float: 10.5, intErr: integer},
		{lit: "1e3", amount: 1_000_000_000, float: 1000, integer: 1000},
		{lit: "1E+2", amount: 100_000_000, float: 100, integer: 100},
		{lit: "2.50e-1", amount: 250_000, float: 0.25, intErr: integer},
		{lit: "0.000001", amount: 1, float: 0.000001, intErr: integer},
		{lit: "1.0000000", amount: 1_000_000, float: 1, integer: 1},
		{lit: "0.0000001", amountErr: decimals, float: 0.0000001, intErr: integer},
		{lit: "1e-7", amountErr: decimals, float: 1e-7, intErr: integer},
		{lit: "9223372036854.775807", amount: math.MaxInt64, float: 9223372036854.775807, intErr: integer},
		{lit: "9223372036854.775808", amountErr: rng, float: 9223372036854.775808, intErr: rng},
		{lit: "9223372036854775807", amountErr: rng, float: 9223372036854775807, integer: math.MaxInt64},
		{lit: "-9223372036854775808", amountErr: rng, float: -9223372036854775808, integer: math.MinInt64},
		{lit: "9223372036854775808", amountErr: rng, float: 9223372036854775808, intErr: rng},
		{lit: "1e400", amountErr: rng, floatErr: rng, intErr: rng},
		{lit: "-1e400", amountErr: rng, floatErr: rng, intErr: rng},
		// money.Parse refuses exponents beyond 40 either way as overflow.
		{lit: "1e-400", amountErr: rng, float: 0, intErr: rng},
	}
	for _, tc := range tests {
		t.Run(tc.lit, func(t *testing.T) {
			var n strictjson.Number
			if tc.lit != "" {
				n = num(t, tc.lit)
			}
			if n.Set() != (tc.lit != "") || n.String() != tc.lit {
				t.Errorf("Set() = %v, String() = %q for literal %q", n.Set(), n.String(), tc.lit)
			}
			a, err := n.Amount("shares")
			checkFieldError(t, "Amount", tc.lit, err, tc.amountErr)
			if err == nil && a != tc.amount {
				t.Errorf("Amount(%q) = %d, want %d", tc.lit, a, tc.amount)
			}
			f, err := n.Float("price")
			checkFieldError(t, "Float", tc.lit, err, tc.floatErr)
			if err == nil && (f != tc.float || math.Signbit(f) != math.Signbit(tc.float)) {
				t.Errorf("Float(%q) = %v, want %v", tc.lit, f, tc.float)
			}
			i, err := n.Int("days")
			checkFieldError(t, "Int", tc.lit, err, tc.intErr)
			if err == nil && i != tc.integer {
				t.Errorf("Int(%q) = %d, want %d", tc.lit, i, tc.integer)
			}
		})
	}
}

// checkFieldError checks that err is nil when want is empty, else a
// *strictjson.Error with that reason.
func checkFieldError(t *testing.T, method, lit string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s(%q): %v, want no error", method, lit, err)
		}
		return
	}
	var e *strictjson.Error
	if !errors.As(err, &e) || e.Reason != want || e.Field == "" {
		t.Errorf("%s(%q) = %v, want *strictjson.Error %q naming the field", method, lit, err, want)
	}
}

func TestNumberAmountOverflowUnwraps(t *testing.T) {
	_, err := num(t, "1e30").Amount("shares")
	if !errors.Is(err, money.ErrOverflow) {
		t.Errorf("Amount(1e30) = %v, want one wrapping money.ErrOverflow", err)
	}
}

func TestNumberUnmarshalJSON(t *testing.T) {
	tests := []struct {
		data   string
		wantOK bool
	}{
		{`5`, true},
		{`-0.5e-3`, true},
		{`"5"`, false},
		{`true`, false},
		{`null`, false},
		{`[1]`, false},
		{`{}`, false},
		{``, false},
		{`-`, false},
		{`01`, false},
		{`1 2`, false},
		{` 1`, false},
		{`NaN`, false},
		{`1e`, false},
	}
	for _, tc := range tests {
		t.Run(tc.data, func(t *testing.T) {
			var n strictjson.Number
			err := n.UnmarshalJSON([]byte(tc.data))
			if tc.wantOK {
				if err != nil || n.String() != tc.data {
					t.Errorf("UnmarshalJSON(%q) = %v, literal %q; want it kept", tc.data, err, n.String())
				}
				return
			}
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) || n.Set() {
				t.Errorf("UnmarshalJSON(%q) = %v, Set() = %v; want *json.UnmarshalTypeError and no value", tc.data, err, n.Set())
			}
		})
	}
}

// TestNumberUnmarshalJSONFrom checks the method Decode uses, through the
// library: a number is kept as written, anything else is an *Error "must be
// a number" that leaves the Number absent.
func TestNumberUnmarshalJSONFrom(t *testing.T) {
	tests := []struct {
		data   string
		wantOK bool
	}{
		{`5`, true},
		{`-0.5e-3`, true},
		{`1e400`, true},
		{`"5"`, false},
		{`true`, false},
		{`null`, false},
		{`[1]`, false},
		{`{}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.data, func(t *testing.T) {
			var n strictjson.Number
			err := jsonv2.Unmarshal([]byte(tc.data), &n)
			if tc.wantOK {
				if err != nil || n.String() != tc.data {
					t.Errorf("Unmarshal(%q) = %v, literal %q; want it kept", tc.data, err, n.String())
				}
				return
			}
			var e *strictjson.Error
			if !errors.As(err, &e) || e.Reason != "must be a number" || n.Set() {
				t.Errorf("Unmarshal(%q) = %v, Set() = %v; want *strictjson.Error \"must be a number\" and no value", tc.data, err, n.Set())
			}
		})
	}
}

func TestNumberMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"set", struct {
			N strictjson.Number `json:"n"`
		}{num(t, "1.50e2")}, `{"n":1.50e2}`},
		{"absent", struct {
			N strictjson.Number `json:"n"`
		}{}, `{"n":null}`},
		{"absent omitzero", struct {
			N strictjson.Number `json:"n,omitzero"`
		}{}, `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.in)
			if err != nil || string(got) != tc.want {
				t.Errorf("json.Marshal(%+v) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
			got, err = jsonv2.Marshal(tc.in)
			if err != nil || string(got) != tc.want {
				t.Errorf("go-json-experiment json.Marshal(%+v) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

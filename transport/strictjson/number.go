package strictjson

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"marketd/core/money"
)

// Number is a JSON number kept as its literal, so that a handler can read it
// exactly (Amount) or as the type it needs (Float, Int), with an error that
// names the field. The zero Number is absent: the body did not have the
// field. Use it for every numeric field of a request whose range or
// precision matters; tag it omitzero so that an absent Number is not
// encoded.
type Number struct {
	lit string // the JSON literal, "" when absent
}

// Set reports whether the body had the field.
func (n Number) Set() bool { return n.lit != "" }

// String returns the literal as the client wrote it, or "" when absent.
func (n Number) String() string { return n.lit }

// MarshalJSON returns the literal, or null when absent.
func (n Number) MarshalJSON() ([]byte, error) {
	if n.lit == "" {
		return []byte("null"), nil
	}
	return []byte(n.lit), nil
}

// UnmarshalJSONFrom is Decode's way in: it accepts only a JSON number, and
// answers anything else (a string such as "5", a boolean, null, an array or
// an object) with an *Error "must be a number", which Decode completes with
// the field's path. Quoted numbers are refused because a client that sends
// them is likely to send "NaN" next; JSON's grammar has no NaN or infinity,
// so the literal is always finite as written (1e400 is kept as such, and
// Float reports it out of range).
func (n *Number) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() != '0' {
		return &Error{Reason: "must be a number"}
	}
	n.lit = string(v)
	return nil
}

// UnmarshalJSON is the same check for encoding/json, for a handler that
// decodes with it: anything but a JSON number is a *json.UnmarshalTypeError,
// which encoding/json completes with the field's name.
func (n *Number) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || (data[0] != '-' && (data[0] < '0' || data[0] > '9')) || !json.Valid(data) {
		return &json.UnmarshalTypeError{Value: literalKind(data), Type: reflect.TypeFor[Number]()}
	}
	n.lit = string(data)
	return nil
}

// Amount returns n as an exact money.Amount (six decimals at most, no
// float involved). An absent Number is "is required", more decimals or a
// value beyond an Amount's range an *Error naming field.
func (n Number) Amount(field string) (money.Amount, error) {
	if n.lit == "" {
		return 0, &Error{Field: field, Reason: "is required"}
	}
	a, err := money.Parse(n.lit)
	switch {
	case err == nil:
		return a, nil
	case errors.Is(err, money.ErrOverflow):
		return 0, &Error{Field: field, Reason: "is out of range", cause: err}
	}
	// The literal is a JSON number, so the syntax error is the precision.
	return 0, &Error{Field: field, Reason: "must have at most 6 decimal places", cause: err}
}

// Float returns n as the nearest float64. An absent Number is "is
// required"; a number too large for a float64 is "is out of range" rather
// than an infinity, which pricing must never see. Values too small for a
// float64 round to zero, as strconv does.
func (n Number) Float(field string) (float64, error) {
	if n.lit == "" {
		return 0, &Error{Field: field, Reason: "is required"}
	}
	f, err := strconv.ParseFloat(n.lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, &Error{Field: field, Reason: "is out of range", cause: err}
	}
	return f, nil
}

// Int returns n as an int64. The value must be a whole number; how it is
// written does not matter ("30", "30.0" and "3e1" are all 30), since JSON
// has one number type and clients' encoders differ. The value is read
// exactly (money.Parse, no float), so no rounding question arises. An
// absent Number is "is required".
func (n Number) Int(field string) (int64, error) {
	if n.lit == "" {
		return 0, &Error{Field: field, Reason: "is required"}
	}
	i, err := strconv.ParseInt(n.lit, 10, 64)
	switch {
	case err == nil:
		return i, nil
	case errors.Is(err, strconv.ErrRange):
		return 0, &Error{Field: field, Reason: "is out of range", cause: err}
	}
	a, perr := money.Parse(n.lit)
	switch {
	case errors.Is(perr, money.ErrOverflow):
		return 0, &Error{Field: field, Reason: "is out of range", cause: perr}
	case perr == nil && a%money.Scale == 0:
		return int64(a / money.Scale), nil
	}
	return 0, &Error{Field: field, Reason: "must be an integer", cause: err}
}

// literalKind names the JSON type of the value data, for an
// UnmarshalTypeError.
func literalKind(data []byte) string {
	if len(data) == 0 {
		return "empty input"
	}
	switch data[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "number"
}

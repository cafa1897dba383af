package strictjson_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"marketd/transport/strictjson"
)

// FuzzDecode checks, for any body and each sample request type, that Decode
// does not panic; that a rejection is an *Error with a message, leaves the
// destination untouched and, when the body is not valid JSON by
// encoding/json, blames the body rather than a field; and that an accepted
// body is valid UTF-8, is one that encoding/json (a second, independent
// decoder) decodes to the same value, and has a re-encoding that Decode
// accepts again as the same value.
func FuzzDecode(f *testing.F) {
	for _, tc := range validCases(f) {
		f.Add([]byte(tc.body))
	}
	for _, tc := range invalidCases {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(typicalTrade))
	f.Add([]byte(typicalKey))
	// Just under the size limit, with an encoding just over it.
	f.Add([]byte(`{"reasoning":"` + strings.Repeat("a", strictjson.MaxBodyBytes-20) + `"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newDst := range []func() any{trade, key, nested, raw} {
			checkDecode(t, body, newDst)
		}
	})
}

func checkDecode(t *testing.T, body []byte, newDst func() any) {
	dst := newDst()
	err := strictjson.Decode(body, dst)
	if err != nil {
		var e *strictjson.Error
		if !errors.As(err, &e) || e.Reason == "" || err.Error() == "" {
			t.Fatalf("Decode(%.200q) into %T = %v (%T), want a *strictjson.Error with a message", body, dst, err, err)
		}
		if !reflect.DeepEqual(dst, newDst()) {
			t.Fatalf("Decode(%.200q) into %T failed with %v but wrote %.200v", body, dst, err, dst)
		}
		if !json.Valid(body) && e.Field != "" {
			t.Fatalf("Decode(%.200q) into %T = %v: a body that is not JSON must not be blamed on a field", body, dst, err)
		}
		return
	}
	if !utf8.Valid(body) {
		t.Fatalf("Decode(%.200q) into %T accepted invalid UTF-8", body, dst)
	}
	std := newDst()
	if err := json.Unmarshal(body, std); err != nil || !reflect.DeepEqual(std, dst) {
		t.Fatalf("Decode(%.200q) into %T accepted %.200v, but json.Unmarshal gives %.200v, %v", body, dst, dst, std, err)
	}
	checkNumbers(t, body, dst)
	if _, ok := dst.(*rawRequest); ok {
		return // encoding/json compacts a RawMessage when encoding it
	}
	enc, err := json.Marshal(dst)
	if err != nil {
		t.Fatalf("json.Marshal(%.200v): %v", dst, err)
	}
	if len(enc) > strictjson.MaxBodyBytes {
		// Absent fields and escapes can make the encoding longer than the
		// body, and the limit is on bodies, not values.
		return
	}
	again := newDst()
	if err := strictjson.Decode(enc, again); err != nil {
		t.Fatalf("Decode(%.200q) accepted %.200v, but Decode of its encoding %.200s = %v", body, dst, enc, err)
	}
	if !reflect.DeepEqual(again, dst) {
		t.Fatalf("Decode(%.200q) = %.200v, but its encoding %.200s decodes to %.200v", body, dst, enc, again)
	}
}

// checkNumbers runs the conversions of the decoded Numbers: each must give
// a value or an *Error naming the field, and never an infinite float.
func checkNumbers(t *testing.T, body []byte, dst any) {
	var nums []strictjson.Number
	switch d := dst.(type) {
	case *tradeRequest:
		nums = append(nums, d.Shares, d.MaxCost)
	case *keyRequest:
		nums = append(nums, d.ExpiresInDays)
	}
	for _, n := range nums {
		_, aErr := n.Amount("n")
		f, fErr := n.Float("n")
		_, iErr := n.Int("n")
		for _, err := range []error{aErr, fErr, iErr} {
			var e *strictjson.Error
			if err != nil && (!errors.As(err, &e) || e.Field != "n" || e.Reason == "") {
				t.Fatalf("Decode(%.200q): conversion of %.60q = %v, want nil or a *strictjson.Error naming the field", body, n, err)
			}
		}
		if fErr == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
			t.Fatalf("Decode(%.200q): Float of %.60q = %v", body, n, f)
		}
	}
}

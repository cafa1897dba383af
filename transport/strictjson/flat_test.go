package strictjson_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"marketd/transport/strictjson"
)

// scanFlatCases are bodies ScanFlat must take (ok) or give up on.
var scanFlatCases = []struct {
	body string
	ok   bool
}{
	{`{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":1,"type":"buy"}`, true},
	{" \t\r\n{ \"a\" : -0.5e+7 , \"b\":\"日本\" } \n", true},
	{`{}`, true},
	{`{"a":1,"a":2}`, true}, // names are the caller's
	{`{"a":01}`, false},
	{`{"a":1.}`, false},
	{`{"a":-}`, false},
	{`{"a":1e}`, false},
	{`{"a":"\n"}`, false},
	{"{\"a\":\"\t\"}", false},
	{"{\"a\":\"\xff\"}", false},
	{"{\"a\":\"x\x1f\"}", false},
	{"{\"a\":\"\x00\"}", false},
	{"{\"a\":\"\x7f ~\"}", true},
	{"{\"a\":\"\xc3\xa9\xc3\"}", false},
	{`{"a":"x\"y"}`, false},
	{`{"a":"x\\"}`, false},
	{`{"a\u0062":1}`, false},
	{`{"a":null}`, false},
	{`{"a":true}`, false},
	{`{"a":[]}`, false},
	{`{"a":{}}`, false},
	{`{"a":1,}`, false},
	{`{"a":1} {}`, false},
	{`{"a":1`, false},
	{`[]`, false},
	{``, false},
	{"\v{}", false},
	{`{"a":1,"b":2,"c":3,"d":4,"e":5}`, false}, // more than checkScanFlat's 4
}

// TestScanFlat: the bodies above are taken or given up on, and what is
// taken agrees with jsontext (checkScanFlat).
func TestScanFlat(t *testing.T) {
	for _, c := range scanFlatCases {
		if ok := checkScanFlat(t, []byte(c.body)); ok != c.ok {
			t.Errorf("ScanFlat(%q): ok %v, want %v", c.body, ok, c.ok)
		}
	}
}

// FuzzScanFlat: whatever ScanFlat takes is one JSON object by jsontext
// (duplicate names aside), whose members, read by jsontext's token reader,
// are the ones ScanFlat returned.
func FuzzScanFlat(f *testing.F) {
	for _, c := range scanFlatCases {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkScanFlat(t, body) })
}

// checkScanFlat fails t when ScanFlat takes body and jsontext disagrees, and
// returns ScanFlat's ok.
func checkScanFlat(t *testing.T, body []byte) bool {
	t.Helper()
	var buf [4]strictjson.Member
	members, ok := strictjson.ScanFlat(string(body), buf[:0])
	if !ok {
		return false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		t.Fatalf("ScanFlat took %q, jsontext reads %v, %v first", body, tok, err)
	}
	for _, m := range members {
		name, err := dec.ReadToken()
		if err != nil || name.String() != m.Name {
			t.Fatalf("ScanFlat took %q with member %q, jsontext reads %v, %v", body, m.Name, name, err)
		}
		v, err := dec.ReadValue()
		switch {
		case err != nil:
			t.Fatalf("ScanFlat took %q, jsontext: %v", body, err)
		case m.Number && (v.Kind() != '0' || string(v) != m.Value),
			!m.Number && (v.Kind() != '"' || string(v) != `"`+m.Value+`"`):
			t.Fatalf("ScanFlat took %q with value %q (number %v), jsontext reads %s", body, m.Value, m.Number, v)
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		t.Fatalf("ScanFlat took %q, jsontext reads %v, %v at its end", body, tok, err)
	}
	if _, err := dec.ReadToken(); err == nil {
		t.Fatalf("ScanFlat took %q, jsontext reads more after the object", body)
	}
	return true
}

// TestScanFlatArray: a body {"trades": [flat objects]} is taken, each
// object's members given in order; anything else is given up on.
func TestScanFlatArray(t *testing.T) {
	for _, c := range []struct {
		body  string
		items []int // members per item, when taken
	}{
		{`{"trades":[]}`, []int{}},
		{` { "trades" : [ {} , {"a":1,"b":"x"} ] } `, []int{0, 2}},
		{`{"trades":[{"a":1},{"a":1,"b":2,"c":3,"d":4,"e":5}]}`, nil}, // over the buffer
		{`{"trades":[{}],"x":1}`, nil},
		{`{"Trades":[]}`, nil},
		{`{"trades":null}`, nil},
		{`{"trades":[{},]}`, nil},
		{`{"trades":[1]}`, nil},
		{`{"trades":[{}]} x`, nil},
		{`{"trades":[{}]`, nil},
		{`{"trades":[{"a":null}]}`, nil},
	} {
		var buf [4]strictjson.Member
		var got []int
		ok := strictjson.ScanFlatArray(c.body, "trades", buf[:0], func(members []strictjson.Member) bool {
			got = append(got, len(members))
			return true
		})
		if ok != (c.items != nil) || ok && !slices.Equal(got, c.items) {
			t.Errorf("ScanFlatArray(%q): ok %v, items %v; want %v", c.body, ok, got, c.items)
		}
	}
}

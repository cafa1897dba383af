package strictjson_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/transport/strictjson"
)

// tradeRequest resembles the body of POST /markets/{id}/trades.
type tradeRequest struct {
	MarketID  string            `json:"market_id"`
	Side      string            `json:"side"`
	Shares    strictjson.Number `json:"shares,omitzero"`
	Type      string            `json:"type"`
	Reasoning string            `json:"reasoning"`
	MaxCost   strictjson.Number `json:"max_cost,omitzero"`
}

// keyRequest resembles the body of POST /keys.
type keyRequest struct {
	Name          string            `json:"name"`
	Scopes        []string          `json:"scopes"`
	ExpiresInDays strictjson.Number `json:"expires_in_days,omitzero"`
}

// nestedRequest exercises paths, nesting and the other supported types.
type nestedRequest struct {
	Meta   meta               `json:"meta"`
	Legs   []leg              `json:"legs"`
	Labels map[string]int     `json:"labels"`
	Extra  any                `json:"extra"`
	Amount money.Amount       `json:"amount"`
	Flag   bool               `json:"flag"`
	Count  int8               `json:"count"`
	Ratio  float32            `json:"ratio"`
	Size   uint16             `json:"size"`
	Opt    *strictjson.Number `json:"opt"`
	ID     uuid.UUID          `json:"id"`
	Region
}

type meta struct {
	Tags []string `json:"tags"`
	Note *string  `json:"note"`
}

type leg struct {
	Outcome string            `json:"outcome"`
	Shares  strictjson.Number `json:"shares,omitzero"`
}

// Region is embedded in nestedRequest: its fields are promoted.
type Region struct {
	Region string `json:"region"`
}

// rawRequest holds a json.RawMessage, which encoding/json hands over whole.
type rawRequest struct {
	Raw json.RawMessage `json:"raw"`
}

// num returns the Number a body would hold for the literal lit.
func num(t testing.TB, lit string) strictjson.Number {
	t.Helper()
	var n strictjson.Number
	if err := json.Unmarshal([]byte(lit), &n); err != nil {
		t.Fatalf("num(%q): %v", lit, err)
	}
	return n
}

// validCases are bodies Decode accepts, with what they decode to.
func validCases(t testing.TB) []struct {
	name string
	body string
	want any
} {
	note := "n"
	return []struct {
		name string
		body string
		want any
	}{
		{"trade", `{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":12.5,"type":"buy","reasoning":"cheap","max_cost":20}`,
			&tradeRequest{MarketID: "0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a", Side: "yes", Shares: num(t, "12.5"), Type: "buy", Reasoning: "cheap", MaxCost: num(t, "20")}},
		{"empty object", `{}`, &tradeRequest{}},
		{"whitespace around", " \t\r\n{ \"side\" : \"no\" }\n ", &tradeRequest{Side: "no"}},
		{"unicode text", `{"reasoning":"Élan 🚀 日本語"}`, &tradeRequest{Reasoning: "Élan 🚀 日本語"}},
		{"escaped unicode and surrogate pair", `{"reasoning":"\u00c9lan \ud83d\ude80 \u65e5"}`, &tradeRequest{Reasoning: "Élan 🚀 日"}},
		{"escaped backslash before u", `{"reasoning":"\\ud800"}`, &tradeRequest{Reasoning: `\ud800`}},
		{"other escapes", `{"reasoning":"a\"b\\c\/d\b\f\n\r\t\u0000"}`, &tradeRequest{Reasoning: "a\"b\\c/d\b\f\n\r\t\x00"}},
		{"literal U+FFFD", `{"reasoning":"\ufffd �"}`, &tradeRequest{Reasoning: "\ufffd \ufffd"}},
		{"escaped key", `{"\u0073ide":"yes"}`, &tradeRequest{Side: "yes"}},
		{"exponent", `{"shares":1e3,"max_cost":1E+2}`, &tradeRequest{Shares: num(t, "1e3"), MaxCost: num(t, "1E+2")}},
		{"micro unit", `{"shares":0.000001}`, &tradeRequest{Shares: num(t, "0.000001")}},
		{"negative zero", `{"shares":-0}`, &tradeRequest{Shares: num(t, "-0")}},
		{"huge number kept as literal", `{"shares":1e400}`, &tradeRequest{Shares: num(t, "1e400")}},
		{"key", `{"name":"bot","scopes":["read","trade"],"expires_in_days":30}`,
			&keyRequest{Name: "bot", Scopes: []string{"read", "trade"}, ExpiresInDays: num(t, "30")}},
		{"empty scopes", `{"scopes":[]}`, &keyRequest{Scopes: []string{}}},
		{"null scopes", `{"scopes":null}`, &keyRequest{}},
		{"nested", `{"meta":{"tags":["a","a"],"note":"n"},"legs":[{"outcome":"yes","shares":1},{"outcome":"no"}],` +
			`"labels":{"a":1,"b":-2},"extra":{"x":[1,"y",null,true,{"z":{}}]},"amount":1.5,"flag":true,` +
			`"count":-128,"ratio":0.5,"size":65535,"opt":7,"id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","region":"eu"}`,
			&nestedRequest{
				Meta:   meta{Tags: []string{"a", "a"}, Note: &note},
				Legs:   []leg{{Outcome: "yes", Shares: num(t, "1")}, {Outcome: "no"}},
				Labels: map[string]int{"a": 1, "b": -2},
				Extra:  map[string]any{"x": []any{1.0, "y", nil, true, map[string]any{"z": map[string]any{}}}},
				Amount: 1_500_000, Flag: true, Count: -128, Ratio: 0.5, Size: 65535,
				Opt: func() *strictjson.Number { n := num(t, "7"); return &n }(),
				ID:  uuid.MustParse("0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a"), Region: Region{Region: "eu"},
			}},
		{"nulls where allowed", `{"meta":{"note":null},"legs":null,"labels":null,"extra":null,"opt":null}`, &nestedRequest{}},
		{"tiny float rounds to zero", `{"ratio":1e-400}`, &nestedRequest{}},
		{"raw message", `{"raw":{"a":[1,2]}}`, &rawRequest{Raw: json.RawMessage(`{"a":[1,2]}`)}},
		{"deep nesting", `{"extra":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
			&nestedRequest{Extra: nest(1000)}},
		// "null" in a string sends Decode down its path for bodies that may
		// hold a null, which must accept what the other path does.
		{"null in a string", `{"side":"null","reasoning":"nullable"}`, &tradeRequest{Side: "null", Reasoning: "nullable"}},
		{"null in a key", `{"labels":{"null":1},"opt":null}`, &nestedRequest{Labels: map[string]int{"null": 1}}},
	}
}

// nest returns depth nested empty []any, as encoding/json decodes them.
func nest(depth int) any {
	var v any = []any{}
	for range depth - 1 {
		v = []any{v}
	}
	return v
}

func TestDecodeValid(t *testing.T) {
	for _, tc := range validCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got := reflect.New(reflect.TypeOf(tc.want).Elem()).Interface()
			if err := strictjson.Decode([]byte(tc.body), got); err != nil {
				t.Fatalf("Decode(%s): %v", tc.body, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decode(%s)\n got %+v\nwant %+v", tc.body, got, tc.want)
			}
		})
	}
}

// invalidCase is a body Decode rejects, and the *Error it must give.
type invalidCase struct {
	name   string
	body   string
	dst    func() any
	field  string // want Error.Field
	reason string // want Error.Reason to contain this
}

func trade() any  { return new(tradeRequest) }
func key() any    { return new(keyRequest) }
func nested() any { return new(nestedRequest) }
func raw() any    { return new(rawRequest) }

var invalidCases = []invalidCase{
	// The body as a whole.
	{"empty body", ``, trade, "", "request body is required"},
	{"whitespace body", " \n\t\r ", trade, "", "request body is required"},
	{"too large", `{"reasoning":"` + strings.Repeat("a", strictjson.MaxBodyBytes) + `"}`, trade, "", "larger than 65536 bytes"},
	{"top-level array", `[{"side":"yes"}]`, trade, "", "expected a JSON object, not an array"},
	{"top-level string", `"side"`, trade, "", "expected a JSON object, not a string"},
	{"top-level number", ` 12`, trade, "", "expected a JSON object, not a number"},
	{"top-level null", `null`, trade, "", "expected a JSON object, not null"},
	{"top-level null with trailing data", `null x`, trade, "", "unexpected data after the JSON value at byte offset 5"},
	{"top-level bool", `true`, trade, "", "expected a JSON object, not a boolean"},
	{"second object", `{"side":"yes"} {"side":"no"}`, trade, "", "unexpected data after the JSON object at byte offset 15"},
	{"trailing garbage", `{"side":"yes"}x`, trade, "", "unexpected data after the JSON object at byte offset 14"},
	{"trailing comma", `{"side":"yes",}`, trade, "", "invalid character '}' at start of string (expecting '\"') at byte offset 14"},
	{"truncated", `{"side":"yes"`, trade, "", "unexpected end of JSON input at byte offset 13"},
	{"truncated in value", `{"scopes":["read",`, key, "", "unexpected end of JSON input"},
	{"missing colon", `{"side" "yes"}`, trade, "", "invalid character '\"' after object name (expecting ':') at byte offset 8"},
	{"single quotes", `{'side':'yes'}`, trade, "", "invalid character '\\'' at start of string (expecting '\"') at byte offset 1"},
	{"comment", `{/* c */"side":"yes"}`, trade, "", "invalid character '/'"},
	{"byte order mark", "\ufeff{}", trade, "", "invalid character '\\ufeff' at start of value at byte offset 0"},
	{"raw newline in string", "{\"reasoning\":\"a\nb\"}", trade, "", "invalid character '\\n' in string (expecting non-control character) at byte offset 15"},
	{"invalid UTF-8", "{\"reasoning\":\"ok \xff\"}", trade, "", "invalid UTF-8 at byte offset 17"},
	{"truncated UTF-8", "{\"reasoning\":\"\xe6\x97\"}", trade, "", "invalid UTF-8 at byte offset 14"},
	{"UTF-8 surrogate", "{\"reasoning\":\"\xed\xa0\x80\"}", trade, "", "invalid UTF-8 at byte offset 14"},
	{"NaN", `{"shares":NaN}`, trade, "", "invalid character 'N' at start of value at byte offset 10"},
	{"Infinity", `{"shares":Infinity}`, trade, "", "invalid character 'I'"},
	{"negative Infinity", `{"shares":-Infinity}`, trade, "", "invalid character 'I' in number"},
	{"leading zero", `{"shares":01}`, trade, "", "invalid character '1' after object value (expecting ',' or '}') at byte offset 11"},
	{"leading dot", `{"shares":.5}`, trade, "", "invalid character '.' at start of value"},
	{"plus sign", `{"shares":+1}`, trade, "", "invalid character '+' at start of value"},
	{"hex", `{"shares":0x10}`, trade, "", "invalid character 'x' after object value"},
	// jsontext's fixed limit on nesting, 10000 levels.
	{"too deep", `{"extra":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, nested, "", "exceeded max depth at byte offset 10008"},

	// A syntax error wins over any earlier semantic one.
	{"unknown field then syntax error", `{"bogus":1,`, trade, "", "unexpected end of JSON input at byte offset 11"},
	{"wrong type then trailing brace", `{"side":5}}`, trade, "", "unexpected data after the JSON object at byte offset 10"},
	{"duplicate then syntax error", `{"side":"a","side":"b",]`, trade, "", "invalid character ']'"},

	// Names.
	{"unknown field", `{"side":"yes","sid":"no"}`, trade, "sid", "unknown field"},
	{"field name differs in case", `{"Side":"yes"}`, trade, "Side", "unknown field"},
	{"field name by Unicode folding", `{"ſide":"yes"}`, trade, "ſide", "unknown field"},
	{"Go field name", `{"MarketID":"x"}`, trade, "MarketID", "unknown field"},
	{"unknown nested field", `{"legs":[{"outcome":"yes","x":1}]}`, nested, "legs[0].x", "unknown field"},
	{"long unknown field clipped", `{"` + strings.Repeat("é", 40) + `":1}`, trade, strings.Repeat("é", 32) + "...", "unknown field"},
	{"duplicate field", `{"side":"yes","shares":1,"side":"no"}`, trade, "side", "duplicate field"},
	{"duplicate field, same value", `{"shares":1,"shares":1}`, trade, "shares", "duplicate field"},
	{"duplicate by escape", `{"side":"a","\u0073ide":"b"}`, trade, "side", "duplicate field"},
	{"duplicate nested", `{"meta":{"tags":[],"tags":[]}}`, nested, "meta.tags", "duplicate field"},
	{"duplicate in array element", `{"legs":[{"outcome":"yes"},{"outcome":"no","outcome":"yes"}]}`, nested, "legs[1].outcome", "duplicate field"},
	{"duplicate map key", `{"labels":{"a":1,"a":2}}`, nested, "labels.a", "duplicate field"},
	{"duplicate inside any", `{"extra":{"a":[{"b":1,"b":2}]}}`, nested, "extra.a[0].b", "duplicate field"},
	{"duplicate inside raw message", `{"raw":{"k":1,"k":2}}`, raw, "raw.k", "duplicate field"},
	{"duplicate embedded field", `{"region":"eu","region":"us"}`, nested, "region", "duplicate field"},

	// Types.
	{"string given number", `{"side":5}`, trade, "side", "must be a string"},
	{"string given object", `{"market_id":{"a":1}}`, trade, "market_id", "must be a string"},
	{"string given null", `{"reasoning":null}`, trade, "reasoning", "must be a string"},
	{"number given string", `{"shares":"5"}`, trade, "shares", "must be a number"},
	{"number given bool", `{"max_cost":true}`, trade, "max_cost", "must be a number"},
	{"number given null", `{"shares":null}`, trade, "shares", "must be a number"},
	{"number given array", `{"shares":[1]}`, trade, "shares", "must be a number"},
	{"number given object", `{"shares":{}}`, trade, "shares", "must be a number"},
	{"array given string", `{"scopes":"read"}`, key, "scopes", "must be an array of strings"},
	{"array given object", `{"scopes":{"read":true}}`, key, "scopes", "must be an array of strings"},
	{"array element number", `{"scopes":["read",5]}`, key, "scopes[1]", "must be a string"},
	{"array element null", `{"scopes":[null]}`, key, "scopes[0]", "must be a string"},
	{"array of objects given object", `{"legs":{}}`, nested, "legs", "must be an array of objects"},
	{"object given null", `{"meta":null}`, nested, "meta", "must be an object"},
	{"object given array", `{"meta":[]}`, nested, "meta", "must be an object"},
	{"bool given string", `{"flag":"true"}`, nested, "flag", "must be true or false"},
	{"pointer to number given string", `{"opt":"1"}`, nested, "opt", "must be a number"},
	{"map value", `{"labels":{"a":1.5}}`, nested, "labels.a", "must be an integer"},
	{"nested array element", `{"meta":{"tags":["a",["b"]]}}`, nested, "meta.tags[1]", "must be a string"},

	// Ranges.
	{"int8 overflow", `{"count":128}`, nested, "count", "is out of range"},
	{"int given exponent", `{"count":1e2}`, nested, "count", "must be an integer"},
	{"int given fraction", `{"count":1.0}`, nested, "count", "must be an integer"},
	{"uint given negative", `{"size":-1}`, nested, "size", "must be a non-negative integer"},
	{"uint16 overflow", `{"size":65536}`, nested, "size", "is out of range"},
	{"float32 overflow", `{"ratio":1e39}`, nested, "ratio", "is out of range"},
	{"any given infinite number", `{"extra":[1e400]}`, nested, "extra[0]", "is out of range"},
	{"custom type rejects", `{"amount":1.0000001}`, nested, "amount", "is not valid"},
	{"custom type given string", `{"amount":"5"}`, nested, "amount", "is not valid"},
	{"custom type given null", `{"amount":null}`, nested, "amount", "is not valid"},
	{"text type given number", `{"id":5}`, nested, "id", "must be a string"},
	{"text type given null", `{"id":null}`, nested, "id", "must be a string"},
	{"text type rejects", `{"id":"not-a-uuid"}`, nested, "id", "is not valid"},
	{"text type with surrogate", `{"id":"\udead"}`, nested, "id", "unpaired UTF-16 surrogate"},
	{"empty key", `{"":1}`, trade, `""`, "unknown field"},
	{"empty key nested", `{"labels":{"":1,"":2}}`, nested, `labels.""`, "duplicate field"},

	// Unpaired surrogates, which encoding/json would turn into U+FFFD.
	{"lone high surrogate", `{"reasoning":"a\ud800"}`, trade, "reasoning", "unpaired UTF-16 surrogate"},
	{"lone low surrogate", `{"reasoning":"\udc00b"}`, trade, "reasoning", "unpaired UTF-16 surrogate"},
	{"high then non-surrogate", `{"reasoning":"\ud800\u0041"}`, trade, "reasoning", "unpaired UTF-16 surrogate"},
	{"high then high", `{"reasoning":"\uD83D\uD83D"}`, trade, "reasoning", "unpaired UTF-16 surrogate"},
	{"reversed pair", `{"reasoning":"\ude80\ud83d"}`, trade, "reasoning", "unpaired UTF-16 surrogate"},
	{"surrogate in array element", `{"scopes":["ok","\udfff"]}`, key, "scopes[1]", "unpaired UTF-16 surrogate"},
	{"surrogate inside any", `{"extra":{"a":"\ud800"}}`, nested, "extra.a", "unpaired UTF-16 surrogate"},
	// In a name, the error names the object (the body for a top-level one).
	{"surrogate in key", `{"labels":{"x\udead":1}}`, nested, "labels", "contains an unpaired UTF-16 surrogate escape at byte offset 13"},
	{"surrogate in top-level key", `{"side":"a", "\ud800":1}`, trade, "", "unpaired UTF-16 surrogate escape at byte offset 14"},
	// Invalid UTF-8 and syntax errors win over semantic errors before them.
	{"unknown field then invalid UTF-8", "{\"bogus\":1,\"reasoning\":\"\xff\"}", trade, "", "invalid UTF-8 at byte offset 24"},
	{"wrong type then unpaired surrogate", `{"side":5,"reasoning":"\ud800"}`, trade, "side", "must be a string"},
}

func TestDecodeInvalid(t *testing.T) {
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			dst := tc.dst()
			zero := tc.dst()
			err := strictjson.Decode([]byte(tc.body), dst)
			var e *strictjson.Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode(%.80q) = %v (%T), want *strictjson.Error", tc.body, err, err)
			}
			if e.Field != tc.field || !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("Decode(%.80q)\n got field %q reason %q\nwant field %q reason containing %q", tc.body, e.Field, e.Reason, tc.field, tc.reason)
			}
			if !reflect.DeepEqual(dst, zero) {
				t.Errorf("Decode(%.80q) wrote %+v into the destination despite the error", tc.body, dst)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"field", `{"shares":"5"}`, "shares: must be a number"},
		{"whole body", `[]`, "invalid JSON body: expected a JSON object, not an array"},
		{"syntax", `{"side":}`, "invalid JSON body: invalid character '}' at start of value at byte offset 8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := strictjson.Decode([]byte(tc.body), new(tradeRequest))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Decode(%s) = %v, want %q", tc.body, err, tc.want)
			}
		})
	}
}

func TestSyntaxErrorUnwraps(t *testing.T) {
	err := strictjson.Decode([]byte(`{"side":"yes",}`), new(tradeRequest))
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || se.ByteOffset != 14 {
		t.Fatalf("Decode = %v, want one wrapping a *jsontext.SyntacticError at offset 14", err)
	}
}

func TestSemanticErrorUnwraps(t *testing.T) {
	err := strictjson.Decode([]byte(`{"side":"yes","sides":"no"}`), new(tradeRequest))
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) || !errors.Is(err, jsonv2.ErrUnknownName) {
		t.Fatalf("Decode = %v, want one wrapping a *json.SemanticError for json.ErrUnknownName", err)
	}
}

// TestDecodeReplacesWhole checks that fields absent from the body are zero
// afterwards, whatever the destination held: the library alone would merge.
func TestDecodeReplacesWhole(t *testing.T) {
	dst := tradeRequest{MarketID: "old", Side: "yes", Shares: num(t, "1")}
	if err := strictjson.Decode([]byte(`{"side":"no"}`), &dst); err != nil {
		t.Fatal(err)
	}
	if want := (tradeRequest{Side: "no"}); dst != want {
		t.Errorf("Decode into a used value = %+v, want %+v", dst, want)
	}
	before := dst
	if err := strictjson.Decode([]byte(`{"side":"yes","bogus":1}`), &dst); err == nil || dst != before {
		t.Errorf("Decode of a bad body = %v and left %+v, want an error and %+v", err, dst, before)
	}
}

// TestNumberFieldInPlainUnmarshal checks that Number's own error lets
// encoding/json name the field when a handler uses json.Unmarshal directly.
func TestNumberFieldInPlainUnmarshal(t *testing.T) {
	var req tradeRequest
	err := json.Unmarshal([]byte(`{"shares":"5"}`), &req)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "shares" {
		t.Fatalf("json.Unmarshal = %v, want *json.UnmarshalTypeError for field shares", err)
	}
}

func TestDecodePanicsOnBadDestination(t *testing.T) {
	tests := []struct {
		name string
		dst  any
	}{
		{"nil", nil},
		{"struct value", tradeRequest{}},
		{"nil pointer", (*tradeRequest)(nil)},
		{"pointer to map", &map[string]any{}},
		{"pointer to slice", &[]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.HasPrefix(msg, "BUG: ") {
					t.Errorf("Decode into %T: recovered %v, want a BUG panic", tc.dst, r)
				}
			}()
			_ = strictjson.Decode([]byte(`{}`), tc.dst)
		})
	}
}

// TestFieldTypesTheLibraryRefuses checks that a field of a type the library
// cannot decode, or a name it cannot resolve, gives an error naming the
// field when the body has it, rather than a panic (the old decoder
// panicked on such destination types; the library finds them lazily).
func TestFieldTypesTheLibraryRefuses(t *testing.T) {
	type withChan struct {
		C chan int `json:"c"`
	}
	type A struct{ X string }
	type B struct{ X string }
	type ambiguous struct {
		A
		B
	}
	tests := []struct {
		name  string
		body  string
		dst   any
		field string
	}{
		{"channel field", `{"c":1}`, &withChan{}, "c"},
		{"ambiguous embedded name", `{"X":"x"}`, &ambiguous{}, "X"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := strictjson.Decode([]byte(tc.body), tc.dst)
			var e *strictjson.Error
			if !errors.As(err, &e) || e.Field != tc.field {
				t.Errorf("Decode(%s) into %T = %v, want an *Error for field %q", tc.body, tc.dst, err, tc.field)
			}
		})
	}
	// Absent, such a field is no error.
	if err := strictjson.Decode([]byte(`{}`), &withChan{}); err != nil {
		t.Errorf("Decode({}) into %T = %v, want nil", &withChan{}, err)
	}
}

// TestEmbeddedResolution checks that fields are resolved as encoding/json
// resolves them: the shallower field wins, then the tagged one.
func TestEmbeddedResolution(t *testing.T) {
	type Inner struct {
		Name string `json:"name"`
		Deep string `json:"Deep"`
	}
	type Other struct {
		Deep string
		Own  string
	}
	type outer struct {
		Inner
		Other
		Name string `json:"name"`
	}
	body := []byte(`{"name":"outer","Deep":"d","Own":"o"}`)
	var got, want outer
	if err := strictjson.Decode(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	if got != want || got.Name != "outer" || got.Inner.Deep != "d" || got.Own != "o" {
		t.Errorf("Decode(%s) = %+v, want %+v as from json.Unmarshal", body, got, want)
	}
}

// TestDecodeConcurrent decodes into a type no other test uses from many
// goroutines at once, so that under -race the library's first use of the
// type, and of the options Decode shares, run concurrently.
func TestDecodeConcurrent(t *testing.T) {
	type order struct {
		Side   string            `json:"side"`
		Shares strictjson.Number `json:"shares"`
		Tags   []string          `json:"tags"`
		Note   *string           `json:"note"`
	}
	const goroutines = 8
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			var o order
			body := []byte(`{"side":"yes","shares":` + strconv.Itoa(g) + `,"tags":["a"]}`)
			if g%2 == 1 {
				// Down the path that checks nulls, whose options are shared too.
				body = []byte(`{"side":"yes","shares":` + strconv.Itoa(g) + `,"tags":["a"],"note":null}`)
			}
			err := strictjson.Decode(body, &o)
			if err == nil && (o.Shares.String() != strconv.Itoa(g) || o.Side != "yes" || len(o.Tags) != 1) {
				err = fmt.Errorf("Decode(%s) = %+v", body, o)
			}
			errs <- err
		}()
	}
	for range goroutines {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestDecodeNonZeroDestination: a destination that is not zero (Decode
// decodes a zero one in place, any other through a new value) is left as
// it was by a rejected body, a body rejected halfway included, and is
// replaced whole by an accepted one.
func TestDecodeNonZeroDestination(t *testing.T) {
	before := tradeRequest{MarketID: "m", Side: "no", Type: "sell", Reasoning: "r"}
	for _, body := range []string{
		`{"market_id":"x","side":"yes","bogus":1}`,
		`{"market_id":"x","side":7}`,
		`{"market_id":"x",}`,
		`{"market_id":null}`,
	} {
		dst := before
		if err := strictjson.Decode([]byte(body), &dst); err == nil {
			t.Fatalf("Decode(%q) accepted the body", body)
		}
		if dst != before {
			t.Errorf("Decode(%q) changed the destination to %+v despite its error", body, dst)
		}
	}
	dst := before
	if err := strictjson.Decode([]byte(`{"market_id":"x","side":"yes"}`), &dst); err != nil {
		t.Fatal(err)
	}
	if want := (tradeRequest{MarketID: "x", Side: "yes"}); dst != want {
		t.Errorf("Decode replaced the destination with %+v, want %+v", dst, want)
	}
}

package transport

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/transport/strictjson"
)

// tradeBodyNames are the names the random bodies use: every field of
// tradeRequest, near misses and a name with an escape.
var tradeBodyNames = []string{"market_id", "side", "shares", "type", "reasoning", "max_cost",
	"min_proceeds", "marketId", "outcome", "amount", "expect_seq",
	"Side", "market-id", "sides", "", `market\u005fid`, "shares ", "é"}

// tradeBodyValues are the values the random bodies use: strings, numbers
// valid and not, and every other kind of JSON value.
var tradeBodyValues = []string{`"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a"`, `"yes"`, `"no"`, `"buy"`, `"sell"`,
	`""`, `"null"`, `"é"`, "\"\xff\"", `"a\"b"`, `"\ud800"`, "\"tab\t\"", `"日本語"`,
	`1`, `0`, `-0`, `12.5`, `1e3`, `1E+3`, `2.5e-7`, `-1`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `0x10`,
	`1.0000001`, `1e400`, `99999999999999999999`, `NaN`,
	`null`, `true`, `false`, `[]`, `["yes"]`, `{}`, `{"a":1}`}

// randomTradeBody returns a body built from the lists above, with random
// whitespace, members and, sometimes, a mutation; or, half the time, a
// body the fast path may take: distinct names of tradeRequest's, values
// of their kind, JSON whitespace.
func randomTradeBody(r *rand.Rand) []byte {
	clean := r.IntN(2) == 0
	spaces := []string{"", "", "", " ", "\n", "\t", "\r\n ", "\v", "\u00a0"}
	if clean {
		spaces = spaces[:7]
	}
	ws := func() string { return spaces[r.IntN(len(spaces))] }
	var b strings.Builder
	b.WriteString(ws())
	b.WriteString("{")
	names := r.Perm(len(tradeBodyNames))
	for i := range r.IntN(7) {
		if i > 0 {
			b.WriteString(ws() + ",")
		}
		name := tradeBodyNames[r.IntN(len(tradeBodyNames))]
		value := tradeBodyValues[r.IntN(len(tradeBodyValues))]
		if clean {
			name = tradeBodyNames[names[i]%tradeFields]
			value = cleanTradeValue(r, name)
		}
		b.WriteString(ws() + `"` + name + `"` + ws() + ":" + ws() + value + ws())
	}
	b.WriteString("}" + ws())
	body := []byte(b.String())
	if clean {
		return body
	}
	switch r.IntN(6) {
	case 0: // flip a byte
		if len(body) > 0 {
			body[r.IntN(len(body))] = byte(r.IntN(256))
		}
	case 1: // cut the end
		body = body[:r.IntN(len(body)+1)]
	case 2: // trailing data
		body = append(body, [...]string{"x", "{}", ",", "0", "\x00"}[r.IntN(5)]...)
	}
	return body
}

// cleanTradeValue returns a value of the JSON kind of the field name: a
// number for a Number, else a string without escapes.
func cleanTradeValue(r *rand.Rand, name string) string {
	numbers := []string{`1`, `0`, `-0`, `12.5`, `1e3`, `1E+3`, `2.5e-7`, `-1`, `1.0000001`, `1e400`, `99999999999999999999`}
	strs := []string{`"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a"`, `"yes"`, `"no"`, `"buy"`, `"sell"`, `""`, `"null"`, `"é"`, `"日本語"`, `"x"`}
	switch name {
	case "shares", "max_cost", "min_proceeds", "amount", "expect_seq":
		return numbers[r.IntN(len(numbers))]
	}
	return strs[r.IntN(len(strs))]
}

// checkTradeBody fails t unless tradeBody.decode gives for body what
// strictjson.Decode into a tradeRequest gives: the same error message, or
// the same fields. It reports whether the fast path took the body.
func checkTradeBody(t *testing.T, body []byte) bool {
	t.Helper()
	var want tradeRequest
	wantErr := strictjson.Decode(body, &want)
	var probe tradeBody
	fast := probe.fromFlat(body)
	var got tradeBody
	gotErr := got.decode(body)
	switch {
	case fast && wantErr != nil:
		t.Fatalf("body %q: the fast path took it, Decode refused it: %v", body, wantErr)
	case (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Fatalf("body %q: error %v, Decode's %v", body, gotErr, wantErr)
	case gotErr == nil && !sameTradeRequest(&got.tradeRequest, &want):
		t.Fatalf("body %q: decoded %s, Decode's %s", body, describeTrade(&got.tradeRequest), describeTrade(&want))
	case fast && !sameTradeRequest(&probe.tradeRequest, &want):
		t.Fatalf("body %q: the fast path decoded %s, Decode %s", body, describeTrade(&probe.tradeRequest), describeTrade(&want))
	}
	return fast
}

// sameTradeRequest reports whether a and b hold the same values.
func sameTradeRequest(a, b *tradeRequest) bool { return describeTrade(a) == describeTrade(b) }

// describeTrade renders every field of r, pointers by what they point to.
func describeTrade(r *tradeRequest) string {
	str := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return "&" + *p
	}
	return strings.Join([]string{str(r.MarketID), str(r.Side), r.Shares.String(), str(r.Type), r.Reasoning,
		r.MaxCost.String(), r.MinProceeds.String(), str(r.WorkflowMarketID), str(r.Outcome),
		r.Amount.String(), r.ExpectSeq.String()}, "|")
}

// TestTradeBodyDecode: the trade route's decoder answers every body as
// strictjson.Decode does (seeded PCG, random and mutated bodies), and its
// fast path takes the usual ones.
func TestTradeBodyDecode(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed^0x7b0d))
	fixed := []string{
		`{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":1,"type":"buy"}`,
		`{"marketId":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","outcome":"no","side":"sell","amount":2.5,"min_proceeds":1,"expect_seq":3,"reasoning":"why"}`,
		`{}`, ` { } `, `{"side":"yes","side":"no"}`, `{"side":null}`, `{"reasoning":null}`, `{"shares":"1"}`,
		`{"side":1}`, `null`, ``, `[]`, `{"side":"yes"} x`, `{"side":"yes",}`, `{"unknown":1}`,
	}
	for _, body := range fixed[:3] {
		if !checkTradeBody(t, []byte(body)) {
			t.Errorf("the fast path did not take %s", body)
		}
	}
	for _, body := range fixed[3:] {
		checkTradeBody(t, []byte(body))
	}
	fast := 0
	const n = 20000
	for range n {
		if checkTradeBody(t, randomTradeBody(r)) {
			fast++
		}
	}
	// Half the bodies are made for the fast path: enough of both kinds
	// for the comparison to mean something.
	if fast < n/4 || fast > n-n/4 {
		t.Errorf("the fast path took %d of %d random bodies", fast, n)
	}
	t.Logf("the fast path took %d of %d random bodies", fast, n)
}

// FuzzTradeBodyDecode: for any body, the trade route's decoder answers as
// strictjson.Decode does.
func FuzzTradeBodyDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 32 {
		f.Add(randomTradeBody(r))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkTradeBody(t, body)
	})
}

// randomBatchBody returns a batch body: random items (randomTradeBody's)
// in {"trades": [...]}, sometimes another name, null, too many items or a
// mutation.
func randomBatchBody(r *rand.Rand) []byte {
	n := r.IntN(core.MaxBatchTrades + 3)
	items := make([]string, n)
	clean := r.IntN(2) == 0
	for i := range items {
		for {
			items[i] = string(randomTradeBody(r))
			if !clean || (&tradeBody{}).fromFlat([]byte(items[i])) {
				break
			}
		}
	}
	name := `"trades"`
	switch r.IntN(12) {
	case 0:
		name = `"Trades"`
	case 1:
		return []byte(`{"trades":null}`)
	case 2:
		return []byte(`{}`)
	case 3:
		name = `"trades":[],"trades"`
	}
	body := []byte(" {" + name + ": [" + strings.Join(items, ", ") + "] } ")
	if !clean && len(body) > 0 && r.IntN(3) == 0 {
		body[r.IntN(len(body))] = byte(r.IntN(256))
	}
	return body
}

// checkBatchBody fails t unless decodeBatch gives for body what
// strictjson.Decode into a batchRequest gives, and reports whether the
// fast path took it.
func checkBatchBody(t *testing.T, body []byte) bool {
	t.Helper()
	var want batchRequest
	wantErr := strictjson.Decode(body, &want)
	probe, fast := fastBatch(body)
	got, present, gotErr := decodeBatch(body)
	switch {
	case fast && wantErr != nil:
		t.Fatalf("body %q: the fast path took it, Decode refused it: %v", body, wantErr)
	case (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Fatalf("body %q: error %v, Decode's %v", body, gotErr, wantErr)
	case gotErr != nil:
		return fast
	case present != (want.Trades != nil):
		t.Fatalf("body %q: trades present %v, Decode's %v", body, present, want.Trades != nil)
	case !present:
		return fast
	case len(got) != len(*want.Trades) || fast && len(probe) != len(got):
		t.Fatalf("body %q: %d trades (fast path %d), Decode's %d", body, len(got), len(probe), len(*want.Trades))
	}
	for i := range got {
		if !sameTradeRequest(&got[i].tradeRequest, &(*want.Trades)[i]) || fast && !sameTradeRequest(&probe[i].tradeRequest, &(*want.Trades)[i]) {
			t.Fatalf("body %q: trade %d decoded %s, Decode's %s", body, i, describeTrade(&got[i].tradeRequest), describeTrade(&(*want.Trades)[i]))
		}
	}
	return fast
}

// TestBatchBodyDecode: the batch route's decoder answers every body as
// strictjson.Decode does (seeded PCG, random and mutated batches), and its
// fast path takes the usual ones.
func TestBatchBodyDecode(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed^0xba7c))
	for _, body := range []string{`{"trades":[]}`, `{"trades":[{}]}`, ` { "trades" : [ {"side":"yes"} , {"type":"sell","shares":2} ] } `} {
		if !checkBatchBody(t, []byte(body)) {
			t.Errorf("the fast path did not take %s", body)
		}
	}
	for _, body := range []string{`{"trades":null}`, `{}`, `{"trades":[1]}`, `{"trades":[{}],"x":1}`, `{"trades":[{},]}`, `{"trades":[{}]`} {
		checkBatchBody(t, []byte(body))
	}
	fast := 0
	const n = 3000
	for range n {
		if checkBatchBody(t, randomBatchBody(r)) {
			fast++
		}
	}
	if fast < n/10 || fast > n-n/10 {
		t.Errorf("the fast path took %d of %d random batches", fast, n)
	}
	t.Logf("the fast path took %d of %d random batches", fast, n)
}

// FuzzBatchBodyDecode: for any body, the batch route's decoder answers as
// strictjson.Decode does.
func FuzzBatchBodyDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 16 {
		f.Add(randomBatchBody(r))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkBatchBody(t, body)
	})
}

// TestTradeBodyKeepsNoBodyBytes: the core request made from a trade body
// holds nothing of the body's bytes, which the fast path reads in place
// and fasthttp reuses after the handler returns: overwriting the body
// after toCore changes nothing in the request. It fails when the
// reasoning is not copied out of the body.
func TestTradeBodyKeepsNoBodyBytes(t *testing.T) {
	account := uuid.MustParse("5d7a7f0e-8c2b-4c1e-9f3a-6b2d1e0c9a87")
	for _, tc := range []struct{ name, body string }{
		{"reference", `{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":1.5,"type":"buy","max_cost":3,"reasoning":"the polls moved"}`},
		{"workflow", `{"marketId":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","outcome":"no","side":"sell","amount":2,"min_proceeds":0.5,"expect_seq":7,"reasoning":"taking profit"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			var tb tradeBody
			if !tb.fromFlat(body) {
				t.Fatalf("the fast path did not take %s", tc.body)
			}
			got, err := tb.toCore(account)
			if err != nil {
				t.Fatalf("toCore(%s): %v", tc.body, err)
			}
			var want tradeRequest
			if err := strictjson.Decode([]byte(tc.body), &want); err != nil {
				t.Fatal(err)
			}
			wantReq, err := want.toCore(account)
			if err != nil {
				t.Fatal(err)
			}
			for i := range body {
				body[i] = 'x'
			}
			if !reflect.DeepEqual(got, wantReq) {
				t.Errorf("body %s: after the body was overwritten the request is %+v, want %+v", tc.body, got, wantReq)
			}
		})
	}
}

// TestTradeMemberIndex: tradeMember finds each of tradeMembers at its
// index, and no other name, near misses included.
func TestTradeMemberIndex(t *testing.T) {
	for i, name := range tradeMembers {
		if got := tradeMember(name); got != i {
			t.Errorf("tradeMember(%q) = %d, want %d", name, got, i)
		}
		for _, other := range []string{name[1:], name[:len(name)-1], name + "x", strings.ToUpper(name)} {
			if got := tradeMember(other); got != -1 {
				t.Errorf("tradeMember(%q) = %d, want -1", other, got)
			}
		}
	}
	if got := tradeMember(""); got != -1 {
		t.Errorf(`tradeMember("") = %d, want -1`, got)
	}
}

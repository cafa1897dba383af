package baseline

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/core/pricing"
)

const (
	testKey      = "svc_live_0123456789abcdef0123456789abcdef"
	testOtherKey = "svc_live_ffffffffffffffffffffffffffffffff"
)

// leastServer serves the least-trade handler of one key (testKey), one
// market and a balance of 1000 units, its records in f.
func leastServer(t *testing.T, f *os.File, recordBytes int) (*Server, uuid.UUID) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	market := uuid.New()
	setup := LeastSetup{Markets: []uuid.UUID{market}, Balance: money.Units(1000), RecordBytes: recordBytes}
	setup.AddKey(testKey)
	s := serveLeastTrade(ln, f, setup, CommitOptions{}, f.Close)
	return s, market
}

// post sends a request and returns its status, its decoded JSON answer
// and its X-Request-Id.
func post(t *testing.T, addr, method, path, key, body string) (int, map[string]any, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var ans map[string]any
	if err := json.Unmarshal(raw, &ans); err != nil {
		t.Fatalf("%s %s %s: the answer is not JSON: %v: %q", method, path, body, err, raw)
	}
	return resp.StatusCode, ans, resp.Header.Get("X-Request-Id")
}

// TestLeastTradeAnswers trades through the least-trade handler and checks
// each answer against docs/API.md: the 200's fields, with the cost, vig
// and prices core/pricing gives at the market's state, and each refusal's
// status, code and field, with nothing changed by a refusal (the next
// trade's market_seq and balance follow from the accepted ones only).
// Then every accepted trade is in the file as a framed record.
func TestLeastTradeAnswers(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), LeastFileName))
	if err != nil {
		t.Fatal(err)
	}
	s, market := leastServer(t, f, 0)
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	q0 := money.Units(core.DefaultLiquidityUnit)
	q := [2]money.Amount{q0, q0}
	balance, seq, held := money.Units(1000), 0, money.Amount(0)
	trade := func(body string) (int, map[string]any) {
		code, ans, rid := post(t, s.Addr(), "POST", LeastTradePath, testKey, body)
		if len(rid) == 0 {
			t.Errorf("%s: no X-Request-Id", body)
		}
		return code, ans
	}
	mid := market.String()
	for _, tc := range []struct {
		body string
		sell bool
		n    money.Amount // shares of an accepted trade
	}{
		{body: `{"market_id":"` + mid + `","side":"yes","shares":10}`, n: money.Units(10)},
		{body: `{"market_id":"` + mid + `","side":"yes","shares":2.5,"type":"sell","min_proceeds":0.000001}`, sell: true, n: 2_500_000},
		{body: `{"type":"buy","shares":1,"side":"yes","market_id":"` + mid + `","reasoning":"r\u00e9sum\u00e9","max_cost":900}`, n: money.Units(1)},
		{body: `{"marketId":"` + mid + `","outcome":"yes","side":"buy","amount":0.5}`, n: 500_000},
	} {
		code, ans := trade(tc.body)
		if code != 200 {
			t.Fatalf("%s: status %d, %v", tc.body, code, ans)
		}
		var want pricing.Quote
		if tc.sell {
			want, err = pricing.QuoteSell(core.DefaultAlpha, q, 0, tc.n)
			balance += want.Amount
			held -= tc.n
		} else {
			want, err = pricing.QuoteBuy(core.DefaultAlpha, q, 0, tc.n)
			balance -= want.Amount
			held += tc.n
		}
		if err != nil {
			t.Fatal(err)
		}
		q, seq = want.QAfter, seq+1
		typ := map[bool]string{false: "buy", true: "sell"}[tc.sell]
		for field, v := range map[string]any{
			"market_id": mid, "side": "yes", "type": typ, "currency": "kp",
			"shares": tc.n.Float(), "cost": want.Amount.Float(), "vig": want.Vig.Float(),
			"balance_after": balance.Float(), "price_yes_after": want.PricesAfter[0],
			"price_no_after": want.PricesAfter[1], "market_seq": float64(seq),
		} {
			if ans[field] != v {
				t.Errorf("%s: %s is %v, want %v", tc.body, field, ans[field], v)
			}
		}
		if _, err := uuid.Parse(ans["trade_id"].(string)); err != nil {
			t.Errorf("trade_id %v: %v", ans["trade_id"], err)
		}
		if at, err := time.Parse(time.RFC3339Nano, ans["created_at"].(string)); err != nil || time.Since(at) > time.Minute {
			t.Errorf("created_at %v: %v", ans["created_at"], err)
		}
	}
	for _, tc := range []struct {
		method, path, key, body string
		status                  int
		code, field             string
	}{
		{"POST", "/api/markets/trades", testKey, `{}`, 404, "not_found", ""},
		{"GET", LeastTradePath, testKey, ``, 405, "method_not_allowed", ""},
		{"POST", LeastTradePath, "", `{}`, 401, "authentication_required", ""},
		{"POST", LeastTradePath, testOtherKey, `{}`, 401, "authentication_required", ""},
		{"POST", LeastTradePath, "svc_live_0123", `{}`, 401, "authentication_required", ""},
		{"POST", LeastTradePath, testKey, `[1]`, 400, "invalid_json", ""},
		{"POST", LeastTradePath, testKey, `{"side":"yes"} x`, 400, "invalid_json", ""},
		{"POST", LeastTradePath, testKey, `{"side":"yes","shares":1}`, 400, "invalid_field", "market_id"},
		{"POST", LeastTradePath, testKey, `{"market_id":"x","side":"yes","shares":1}`, 400, "invalid_field", "market_id"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"up","shares":1}`, 400, "invalid_field", "side"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":0}`, 400, "invalid_field", "shares"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":"1"}`, 400, "invalid_field", "shares"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":1e10}`, 400, "invalid_field", "shares"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":1,"type":"hold"}`, 400, "invalid_field", "type"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":1,"colour":"red"}`, 400, "invalid_field", "colour"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","outcome":"yes","amount":1}`, 400, "invalid_field", "market_id"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","side":"no","shares":1}`, 400, "invalid_field", "side"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":1,"min_proceeds":1}`, 400, "invalid_field", "min_proceeds"},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + uuid.NewString() + `","side":"yes","shares":1}`, 404, "market_not_found", ""},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"no","shares":1,"type":"sell"}`, 400, "insufficient_shares", ""},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":1,"max_cost":0.01}`, 400, "slippage_exceeded", ""},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":5000}`, 400, "insufficient_balance", ""},
		{"POST", LeastTradePath, testKey, `{"market_id":"` + mid + `","side":"yes","shares":1,"expect_seq":0}`, 409, "market_moved", ""},
	} {
		code, ans, rid := post(t, s.Addr(), tc.method, tc.path, tc.key, tc.body)
		if code != tc.status || ans["code"] != tc.code || ans["request_id"] != rid || rid == "" {
			t.Errorf("%s %s %s: %d %v (X-Request-Id %q), want %d %s", tc.method, tc.path, tc.body, code, ans, rid, tc.status, tc.code)
		}
		if f, _ := ans["field"].(string); f != tc.field {
			t.Errorf("%s: field %q, want %q", tc.body, f, tc.field)
		}
	}
	// After the refusals, the next trade follows the accepted ones.
	code, ans := trade(`{"market_id":"` + mid + `","side":"yes","shares":` + held.String() + `,"type":"sell","expect_seq":4}`)
	if code != 200 || ans["market_seq"] != float64(seq+1) {
		t.Fatalf("the sell of every share held after the refusals: %d %v, want market_seq %d", code, ans, seq+1)
	}
	// The records: four trades, each framed and checked.
	raw, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for len(raw) > 0 {
		if len(raw) < 8 || int(binary.LittleEndian.Uint32(raw)) > len(raw)-8 {
			t.Fatalf("record %d: torn: %d bytes left", records, len(raw))
		}
		n := int(binary.LittleEndian.Uint32(raw))
		body := raw[8 : 8+n]
		if crc32.Checksum(body, crc32c) != binary.LittleEndian.Uint32(raw[4:]) || body[0] != leastRecordKind {
			t.Fatalf("record %d: bad checksum or kind", records)
		}
		if got := uuid.UUID(body[34:50]); got != market {
			t.Errorf("record %d: market %s, want %s", records, got, market)
		}
		if records == 0 && 8+n != 100 {
			t.Errorf("the first record (no reasoning) is %d bytes, want 100", 8+n)
		}
		raw, records = raw[8+n:], records+1
	}
	if records != seq+1 {
		t.Errorf("%d records in the file, want %d (one per accepted trade)", records, seq+1)
	}
	if strings.Count(s.Name(), "least") != 1 {
		t.Errorf("name %q", s.Name())
	}
}

// TestLeastTradeFailedCommit gives the handler a file it cannot write to:
// a trade must get 500 internal_error, never a 200 whose record is not on
// disk.
func TestLeastTradeFailedCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), LeastFileName)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path) // read only: every write fails
	if err != nil {
		t.Fatal(err)
	}
	s, market := leastServer(t, f, 0)
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	code, ans, _ := post(t, s.Addr(), "POST", LeastTradePath, testKey, `{"market_id":"`+market.String()+`","side":"yes","shares":1}`)
	if code != 500 || ans["code"] != "internal_error" {
		t.Fatalf("a trade whose record cannot be written: %d %v, want 500 internal_error", code, ans)
	}
}

// TestLeastSetupFile writes a setup and reads it back; a missing file is
// the empty setup.
func TestLeastSetupFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), LeastSetupFile)
	if s, err := ReadLeastSetup(path); err != nil || len(s.KeyHashes)+len(s.Markets) != 0 {
		t.Fatalf("no file: %+v, %v", s, err)
	}
	want := LeastSetup{Markets: []uuid.UUID{uuid.New(), uuid.New()}, Balance: 1_000_000, RecordBytes: 300}
	want.AddKey(testKey)
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), testKey[len("svc_live_"):]) {
		t.Error("the setup file holds the key itself")
	}
	got, err := ReadLeastSetup(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Balance != want.Balance || got.RecordBytes != want.RecordBytes || len(got.KeyHashes) != 1 || got.KeyHashes[0] != want.KeyHashes[0] ||
		len(got.Markets) != 2 || got.Markets[1] != want.Markets[1] {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if err := os.WriteFile(path, []byte("key 12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLeastSetup(path); err == nil {
		t.Error("a short key hash was read without an error")
	}
}

// TestLeastTradeRecordBytes pads the records to 300 bytes, as the
// fsync-only handler writes per request.
func TestLeastTradeRecordBytes(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), LeastFileName))
	if err != nil {
		t.Fatal(err)
	}
	s, market := leastServer(t, f, RecordBytes)
	code, ans, _ := post(t, s.Addr(), "POST", LeastTradePath, testKey, `{"market_id":"`+market.String()+`","side":"no","shares":1}`)
	if code != 200 {
		t.Fatalf("%d %v", code, ans)
	}
	st, err := os.Stat(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Error(err)
	}
	if st.Size() != RecordBytes {
		t.Errorf("one trade wrote %d bytes, want %d", st.Size(), RecordBytes)
	}
}

package transport

import (
	"net/http"
	"strings"
	"testing"

	"marketd/core/money"
	"marketd/transport/wire"
)

// Tests of POST/DELETE /api/wallet and /api/token/* (docs/API.md, their
// sections), and of trading in the USDC mode.

// Addresses of EIP-55's reference vectors.
const (
	walletA = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	walletB = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
)

func hash64(c string) string { return "0x" + strings.Repeat(c, 64) }

func TestWallet(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, id := ts.registerAccount("linker")
	other, _ := ts.registerAccount("other")
	me := auth{session: sess}
	ts.expect(ts.do("DELETE", "/api/wallet", me, ""), http.StatusBadRequest, "No wallet linked")
	r := ts.do("POST", "/api/wallet", me, `{"address":"`+strings.ToLower(walletA)+`"}`)
	ts.expect(r, http.StatusOK, "")
	if string(r.body) != `{"wallet_address":"`+walletA+`"}` {
		t.Fatalf("link answer %s, want the EIP-55 form", r.body)
	}
	// The same address again, in checksum form: 200, unchanged.
	ts.expect(ts.do("POST", "/api/wallet", me, `{"address":"`+walletA+`"}`), http.StatusOK, "")

	before := ts.accessStateOf(id)
	bad := []struct {
		name string
		a    auth
		body string
		msg  string
	}{
		{"missing", me, `{}`, "address: is required"},
		{"short", me, `{"address":"0x1234"}`, "address: must be 0x followed by 40 hexadecimal digits"},
		{"not hex", me, `{"address":"0x` + strings.Repeat("z", 40) + `"}`, "address: must be 0x followed by 40 hexadecimal digits"},
		{"bad checksum", me, `{"address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"}`, "address: invalid EIP-55 checksum"},
		{"not a string", me, `{"address":5}`, "address: must be a string"},
		{"a second wallet", me, `{"address":"` + walletB + `"}`, "Wallet already linked"},
		{"another account's", auth{session: other}, `{"address":"` + walletA + `"}`, "Wallet linked to another account"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expect(ts.do("POST", "/api/wallet", tc.a, tc.body), http.StatusBadRequest, tc.msg)
		})
	}
	ts.expectUnchanged(before, id)

	ts.expect(ts.do("POST", "/api/profile/trading-mode", me, `{"mode":"usdc"}`), http.StatusOK, "")
	r = ts.do("DELETE", "/api/wallet", me, "")
	ts.expect(r, http.StatusOK, "")
	if string(r.body) != `{"wallet_address":null,"trading_mode":"kp"}` {
		t.Fatalf("unlink answer %s", r.body)
	}
	// Free again for anyone.
	ts.expect(ts.do("POST", "/api/wallet", auth{session: other}, `{"address":"`+walletA+`"}`), http.StatusOK, "")
}

type transferOut struct {
	ID            string       `json:"id"`
	Amount        money.Amount `json:"amount"`
	TxHash        string       `json:"tx_hash"`
	WalletAddress string       `json:"wallet_address"`
	Status        string       `json:"status"`
	CreatedAt     string       `json:"created_at"`
	// Comparable forms of the nullable fields: nil or the value.
	ClaimedAmount any `json:"claimed_amount"`
	ResolvedAt    any `json:"resolved_at"`
	ChainTx       any `json:"-"`
}

type depositOut struct {
	Deposit     transferOut  `json:"deposit"`
	Withdrawal  transferOut  `json:"withdrawal"`
	USDCBalance money.Amount `json:"usdc_balance"`
}

type tokenBalanceOut struct {
	USDC           money.Amount      `json:"usdc"`
	WalletAddress  *string           `json:"wallet_address"`
	DepositAddress *string           `json:"deposit_address"`
	Withdrawals    []transferOut     `json:"withdrawals"`
	Deposits       []transferOut     `json:"deposits"`
	Count          int               `json:"count"`
	Limit          int               `json:"limit"`
	Offset         int               `json:"offset"`
	Ledger         []wire.LedgerItem `json:"ledger"`
}

// TestTokenFlow links a wallet, deposits, trades, splits and merges in
// the USDC mode, withdraws, and reads the token balance, with every error
// of the token endpoints on the way.
func TestTokenFlow(t *testing.T) {
	ts := newTestServer(t, Config{})
	adm := ts.admin()
	mkt := ts.createMarket(adm, nil)
	sess, id := ts.registerAccount("holder")
	otherSess, _ := ts.registerAccount("rival")
	me, rival := auth{session: sess}, auth{session: otherSess}
	ts.expect(ts.do("POST", "/api/token/deposit", me, `{"amount":5,"tx_hash":"`+hash64("a")+`"}`), http.StatusBadRequest, "Link a wallet first")
	ts.expect(ts.do("POST", "/api/token/withdraw", me, `{"amount":5}`), http.StatusBadRequest, "Link a wallet first")
	ts.expect(ts.do("POST", "/api/wallet", me, `{"address":"`+walletA+`"}`), http.StatusOK, "")
	ts.expect(ts.do("POST", "/api/wallet", rival, `{"address":"`+walletB+`"}`), http.StatusOK, "")

	// The manual custody (the default): pending until the admin confirms
	// it with the amount seen on the chain.
	var dep depositOut
	r := ts.do("POST", "/api/token/deposit", me, `{"amount":100.5,"tx_hash":"`+hash64("A")+`"}`)
	ts.decode(r, http.StatusOK, &dep)
	checkShape(t, "deposit", decodeExact(t, r.body)["deposit"], map[string]shape{"id": sUUID, "amount": sNumber,
		"claimed_amount": sNumber, "tx_hash": sString, "status": sString, "created_at": sTime, "resolved_at": sTimeOrNull})
	if dep.Deposit.Amount != money.Amount(100_500_000) || dep.Deposit.TxHash != hash64("a") || dep.Deposit.Status != "pending" ||
		dep.USDCBalance != 0 {
		t.Fatalf("deposit %s", r.body)
	}
	r = ts.do("POST", "/api/admin/deposits/"+dep.Deposit.ID+"/confirm", auth{session: adm}, `{"amount":100.5}`)
	ts.decode(r, http.StatusOK, &dep)
	if dep.Deposit.Status != "credited" || dep.USDCBalance != money.Amount(100_500_000) || dep.Deposit.ResolvedAt == nil {
		t.Fatalf("confirmed deposit %s", r.body)
	}
	var again depositOut
	ts.decode(ts.do("POST", "/api/token/deposit", me, `{"amount":7,"tx_hash":"`+hash64("a")+`"}`), http.StatusOK, &again)
	if again.Deposit != dep.Deposit || again.USDCBalance != dep.USDCBalance {
		t.Fatalf("repeat deposit %+v, want the first %+v", again, dep)
	}

	before := ts.accessStateOf(id)
	bad := []struct {
		name, path, body, field, msg string
		a                            auth
	}{
		{"deposit amount missing", "/api/token/deposit", `{"tx_hash":"` + hash64("b") + `"}`, "amount", "", me},
		{"deposit amount zero", "/api/token/deposit", `{"amount":0,"tx_hash":"` + hash64("b") + `"}`, "amount", "", me},
		{"deposit amount negative", "/api/token/deposit", `{"amount":-1,"tx_hash":"` + hash64("b") + `"}`, "amount", "", me},
		{"deposit amount 7 decimals", "/api/token/deposit", `{"amount":1.0000001,"tx_hash":"` + hash64("b") + `"}`, "amount", "", me},
		{"deposit amount over 1e9", "/api/token/deposit", `{"amount":1000000000.000001,"tx_hash":"` + hash64("b") + `"}`, "amount", "", me},
		{"deposit amount a string", "/api/token/deposit", `{"amount":"5","tx_hash":"` + hash64("b") + `"}`, "amount", "", me},
		{"tx_hash missing", "/api/token/deposit", `{"amount":1}`, "tx_hash", "", me},
		{"tx_hash short", "/api/token/deposit", `{"amount":1,"tx_hash":"0xabc"}`, "tx_hash", "", me},
		{"tx_hash not hex", "/api/token/deposit", `{"amount":1,"tx_hash":"` + hash64("g") + `"}`, "tx_hash", "", me},
		{"unknown field", "/api/token/deposit", `{"amount":1,"tx_hash":"` + hash64("b") + `","memo":"x"}`, "memo", "", me},
		{"tx credited to another account", "/api/token/deposit", `{"amount":1,"tx_hash":"` + hash64("a") + `"}`, "", "tx_hash already credited to another account", rival},
		{"withdraw amount missing", "/api/token/withdraw", `{}`, "amount", "", me},
		{"withdraw amount zero", "/api/token/withdraw", `{"amount":0}`, "amount", "", me},
		{"withdraw more than held", "/api/token/withdraw", `{"amount":100.500001}`, "", "Insufficient balance", me},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			r := ts.do("POST", tc.path, tc.a, tc.body)
			if tc.field != "" {
				ts.expectNamed(r, http.StatusBadRequest, tc.field)
				return
			}
			ts.expect(r, http.StatusBadRequest, tc.msg)
		})
	}
	ts.expectUnchanged(before, id)

	// In the USDC mode, trades and splits take USDC; KP stays.
	ts.expect(ts.do("POST", "/api/profile/trading-mode", me, `{"mode":"usdc"}`), http.StatusOK, "")
	kp := ts.profile(me).Agent.Balance
	tr := ts.trade(me, mkt.ID.String(), "yes", "buy", "10")
	if tr.BalanceAfter != dep.USDCBalance-tr.Cost || ts.profile(me).Agent.Balance != kp {
		t.Fatalf("USDC trade %+v: balance_after, want %s - cost; KP %s", tr, dep.USDCBalance, kp)
	}
	var trRaw map[string]any
	ts.decode(ts.do("POST", "/api/markets/trade", me, `{"market_id":"`+mkt.ID.String()+`","side":"no","type":"buy","shares":1}`), http.StatusOK, &trRaw)
	if trRaw["currency"] != "usdc" {
		t.Fatalf("trade in USDC mode answered currency %v", trRaw["currency"])
	}
	sm := ts.splitMerge(me, mkt.ID.String(), "split", "2")
	if a, _ := ts.eng.Account(id); sm.BalanceAfter != a.Balances[money.USDC] {
		t.Fatalf("split balance_after %s, USDC balance %s", sm.BalanceAfter, a.Balances[money.USDC])
	}
	mj := decodeExact(t, ts.do("GET", "/api/markets/"+mkt.ID.String(), auth{}, "").body)
	usdc, ok := mj["usdc"].(map[string]any)
	if !ok {
		t.Fatalf("market without its usdc book: %v", mj)
	}
	checkShape(t, "market.usdc", usdc, map[string]shape{"prices": sObject, "multipliers": sObject, "liquidity": sObject, "volume": sNumber, "market_seq": sNumber})
	port := decodeExact(t, ts.do("GET", "/api/portfolio", me, "").body)
	if port["trading_mode"] != "usdc" {
		t.Fatalf("portfolio trading_mode %v", port["trading_mode"])
	}
	for _, p := range port["positions"].([]any) {
		if p.(map[string]any)["currency"] != "usdc" {
			t.Fatalf("position %v, want currency usdc", p)
		}
	}
	ts.expect(ts.do("DELETE", "/api/wallet", me, ""), http.StatusBadRequest, "USDC balance or positions remain")

	// Back out of the market, then withdraw everything.
	ts.splitMerge(me, mkt.ID.String(), "merge", "2")
	ts.trade(me, mkt.ID.String(), "yes", "sell", "10")
	ts.trade(me, mkt.ID.String(), "no", "sell", "1")
	a, _ := ts.eng.Account(id)
	var w depositOut
	r = ts.do("POST", "/api/token/withdraw", me, jsonBody(map[string]any{"amount": a.Balances[money.USDC]}))
	ts.decode(r, http.StatusOK, &w)
	checkShape(t, "withdrawal", decodeExact(t, r.body)["withdrawal"], map[string]shape{"id": sUUID, "amount": sNumber,
		"wallet_address": sString, "status": sString, "tx_hash": sStringOrNull, "created_at": sTime, "resolved_at": sTimeOrNull})
	if w.Withdrawal.Amount != a.Balances[money.USDC] || w.Withdrawal.WalletAddress != walletA || w.Withdrawal.Status != "queued" || w.USDCBalance != 0 {
		t.Fatalf("withdrawal %s", r.body)
	}

	var bal tokenBalanceOut
	r = ts.do("GET", "/api/token/balance", me, "")
	ts.decode(r, http.StatusOK, &bal)
	checkShape(t, "token balance", decodeExact(t, r.body), map[string]shape{"usdc": sNumber, "wallet_address": sStringOrNull, "deposit_address": sStringOrNull,
		"withdrawals": sArray, "deposits": sArray, "count": sInt, "limit": sInt, "offset": sInt, "ledger": sArray})
	// deposit, buy, buy, split, merge, sell, sell, withdrawal
	if bal.USDC != 0 || *bal.WalletAddress != walletA || len(bal.Withdrawals) != 1 || bal.Withdrawals[0] != w.Withdrawal ||
		len(bal.Deposits) != 1 || bal.Deposits[0] != dep.Deposit || bal.Count != 8 || len(bal.Ledger) != 8 ||
		bal.Ledger[0].TxType != "withdrawal" || bal.Ledger[7].TxType != "deposit" || bal.Ledger[7].RefID.String() != dep.Deposit.ID {
		t.Fatalf("token balance %s", r.body)
	}
	var page tokenBalanceOut
	ts.decode(ts.do("GET", "/api/token/balance?limit=2&offset=6", me, ""), http.StatusOK, &page)
	if page.Count != 8 || page.Limit != 2 || page.Offset != 6 || len(page.Ledger) != 2 || page.Ledger[1] != bal.Ledger[7] {
		t.Fatalf("page %+v", page)
	}
	ts.expectNamed(ts.do("GET", "/api/token/balance?limit=1001", me, ""), http.StatusBadRequest, "limit")
	// The points ledger holds none of it.
	for _, e := range ts.points(me, "").Ledger {
		if e.TxType == "deposit" || e.TxType == "withdrawal" {
			t.Fatalf("USDC entry in the points ledger: %+v", e)
		}
	}
	// A queued withdrawal keeps the wallet until the admin sends it.
	ts.expect(ts.do("DELETE", "/api/wallet", me, ""), http.StatusBadRequest, "Pending deposits or queued withdrawals remain")
	ts.expect(ts.do("POST", "/api/admin/withdrawals/"+w.Withdrawal.ID+"/sent", auth{session: adm}, `{"tx_hash":"`+hash64("c")+`"}`),
		http.StatusOK, "")
	r = ts.do("DELETE", "/api/wallet", me, "")
	ts.expect(r, http.StatusOK, "")
}

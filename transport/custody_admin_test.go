package transport

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestCustodyAdminEndpoints walks the admin's custody endpoints: the
// access rules (a session with the admin role; an admin key cannot mint),
// the lists, each decision and its refusals, and the balance they leave.
func TestCustodyAdminEndpoints(t *testing.T) {
	ts := newTestServer(t, Config{DepositAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"})
	adm := ts.admin()
	admin := auth{session: adm}
	adminKey := auth{key: ts.newKey(adm, "admin", "read", "trade")}
	sess, _ := ts.registerAccount("holder")
	me := auth{session: sess}
	ts.expect(ts.do("POST", "/api/wallet", me, `{"address":"`+walletB+`"}`), http.StatusOK, "")
	var dep depositOut
	ts.decode(ts.do("POST", "/api/token/deposit", me, `{"amount":500,"tx_hash":"`+hash64("d")+`"}`), http.StatusOK, &dep)
	confirm := "/api/admin/deposits/" + dep.Deposit.ID + "/confirm"

	for _, tc := range []struct {
		name   string
		a      auth
		method string
		path   string
		body   string
		status int
		msg    string
	}{
		{"admin key confirms", adminKey, "POST", confirm, `{"amount":500}`, http.StatusForbidden, "Session required"},
		{"admin key lists", adminKey, "GET", "/api/admin/deposits", "", http.StatusForbidden, "Session required"},
		{"speculator confirms", me, "POST", confirm, `{"amount":500}`, http.StatusForbidden, "Admin role required"},
		{"speculator lists withdrawals", me, "GET", "/api/admin/withdrawals", "", http.StatusForbidden, "Admin role required"},
		{"no credentials", auth{}, "POST", confirm, `{"amount":500}`, http.StatusUnauthorized, "Authentication required"},
		{"unknown deposit", admin, "POST", "/api/admin/deposits/" + uuid.NewString() + "/confirm", `{"amount":500}`, http.StatusNotFound, "Transfer not found"},
		{"malformed id", admin, "POST", "/api/admin/deposits/x/reject", `{"amount":500}`, http.StatusBadRequest, ""},
		{"withdrawal path for a deposit", admin, "POST", "/api/admin/withdrawals/" + dep.Deposit.ID + "/failed", "", http.StatusNotFound, "Transfer not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expect(ts.do(tc.method, tc.path, tc.a, tc.body), tc.status, tc.msg)
		})
	}
	ts.expectNamed(ts.do("POST", confirm, admin, `{}`), http.StatusBadRequest, "amount")
	ts.expectNamed(ts.do("POST", confirm, admin, `{"amount":0}`), http.StatusBadRequest, "amount")
	ts.expectNamed(ts.do("POST", confirm, admin, `{"amount":1,"memo":"x"}`), http.StatusBadRequest, "memo")
	if p := ts.tokenBalance(me); p.USDC != 0 || len(p.Deposits) != 1 || p.Deposits[0].Status != "pending" {
		t.Fatalf("before the confirmation: %+v", p)
	}

	var list struct {
		Count int `json:"count"`
		Items []struct {
			AgentID string       `json:"agent_id"`
			ID      string       `json:"id"`
			Amount  money.Amount `json:"amount"`
			Status  string       `json:"status"`
		} `json:"items"`
	}
	ts.decode(ts.do("GET", "/api/admin/deposits", admin, ""), http.StatusOK, &list)
	if list.Count != 1 || list.Items[0].ID != dep.Deposit.ID || list.Items[0].Status != "pending" {
		t.Fatalf("pending deposits %+v", list)
	}
	// The chain showed 400 of the 500 claimed: 400 is credited.
	var got depositOut
	ts.decode(ts.do("POST", confirm, admin, `{"amount":400}`), http.StatusOK, &got)
	if got.Deposit.Status != "credited" || got.Deposit.Amount != money.Units(400) || got.USDCBalance != money.Units(400) {
		t.Fatalf("confirmed %+v", got)
	}
	ts.expect(ts.do("POST", confirm, admin, `{"amount":400}`), http.StatusBadRequest, "Transfer is final")
	ts.decode(ts.do("GET", "/api/admin/deposits", admin, ""), http.StatusOK, &list)
	if list.Count != 0 {
		t.Fatalf("pending deposits after the confirmation %+v", list)
	}

	// A rejected deposit frees its transaction.
	var d2 depositOut
	ts.decode(ts.do("POST", "/api/token/deposit", me, `{"amount":9,"tx_hash":"`+hash64("e")+`"}`), http.StatusOK, &d2)
	ts.expect(ts.do("POST", "/api/admin/deposits/"+d2.Deposit.ID+"/reject", admin, ""), http.StatusOK, "")
	ts.decode(ts.do("POST", "/api/token/deposit", me, `{"amount":9,"tx_hash":"`+hash64("e")+`"}`), http.StatusOK, &d2)
	if d2.Deposit.Status != "pending" {
		t.Fatalf("deposit of a rejected transaction: %+v", d2)
	}

	// Withdrawals: failed refunds, sent needs the chain's hash.
	var w depositOut
	ts.decode(ts.do("POST", "/api/token/withdraw", me, `{"amount":150}`), http.StatusOK, &w)
	wpath := "/api/admin/withdrawals/" + w.Withdrawal.ID
	ts.expectNamed(ts.do("POST", wpath+"/sent", admin, `{}`), http.StatusBadRequest, "tx_hash")
	ts.expectNamed(ts.do("POST", wpath+"/sent", admin, `{"tx_hash":"0x1"}`), http.StatusBadRequest, "tx_hash")
	ts.expect(ts.do("POST", wpath+"/failed", adminKey, ""), http.StatusForbidden, "Session required")
	ts.decode(ts.do("POST", wpath+"/failed", admin, ""), http.StatusOK, &w)
	if w.Withdrawal.Status != "failed" || w.USDCBalance != money.Units(400) {
		t.Fatalf("failed withdrawal %+v", w)
	}
	ts.expect(ts.do("POST", wpath+"/sent", admin, `{"tx_hash":"`+hash64("f")+`"}`), http.StatusBadRequest, "Transfer is final")
	b := ts.tokenBalance(me)
	if b.USDC != money.Units(400) || b.Ledger[0].TxType != "withdrawal_refund" || b.Ledger[0].Amount != money.Units(150) ||
		b.DepositAddress == nil || *b.DepositAddress != "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" {
		t.Fatalf("token balance after a refund %+v", b)
	}
}

func (ts *testServer) tokenBalance(a auth) tokenBalanceOut {
	ts.t.Helper()
	var out tokenBalanceOut
	ts.decode(ts.do("GET", "/api/token/balance", a, ""), http.StatusOK, &out)
	return out
}

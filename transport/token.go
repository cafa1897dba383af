package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
)

// maxTransfersShown bounds the deposits and withdrawals listed by GET
// /api/token/balance: the newest ones (our choice; the ledger pages the
// rest).
const maxTransfersShown = 100

type depositRequest struct {
	Amount strictjson.Number `json:"amount"`
	TxHash string            `json:"tx_hash"`
}

type withdrawRequest struct {
	Amount strictjson.Number `json:"amount"`
}

// depositJSON is a deposit (docs/API.md, "Custody"): amount is what was
// credited, or while pending what the depositor claimed; claimed_amount
// what the depositor claimed (null for deposits made before custody
// modes); resolved_at when an admin confirmed or rejected it.
type depositJSON struct {
	ID            uuid.UUID     `json:"id"`
	Amount        money.Amount  `json:"amount"`
	ClaimedAmount *money.Amount `json:"claimed_amount"`
	TxHash        string        `json:"tx_hash"`
	Status        string        `json:"status"`
	CreatedAt     timestamp     `json:"created_at"`
	ResolvedAt    *timestamp    `json:"resolved_at"`
}

// withdrawalJSON is a withdrawal: tx_hash is the chain's transaction once
// sent (null before, and when sent in the record custody mode).
type withdrawalJSON struct {
	ID            uuid.UUID    `json:"id"`
	Amount        money.Amount `json:"amount"`
	WalletAddress string       `json:"wallet_address"`
	Status        string       `json:"status"`
	TxHash        *string      `json:"tx_hash"`
	CreatedAt     timestamp    `json:"created_at"`
	ResolvedAt    *timestamp   `json:"resolved_at"`
}

func depositOf(t core.Transfer) depositJSON {
	d := depositJSON{ID: t.ID, Amount: t.Amount, TxHash: t.TxHash, Status: t.Status.String(), CreatedAt: timestamp(t.Time),
		ResolvedAt: optionalTime(t.ResolvedAt)}
	if t.Claimed != 0 {
		claimed := t.Claimed
		d.ClaimedAmount = &claimed
	}
	return d
}

func withdrawalOf(t core.Transfer) withdrawalJSON {
	return withdrawalJSON{ID: t.ID, Amount: t.Amount, WalletAddress: t.Wallet, Status: t.Status.String(),
		TxHash: optionalString(t.ChainTx), CreatedAt: timestamp(t.Time), ResolvedAt: optionalTime(t.ResolvedAt)}
}

type depositResponse struct {
	Deposit     depositJSON  `json:"deposit"`
	USDCBalance money.Amount `json:"usdc_balance"`
}

type withdrawResponse struct {
	Withdrawal  withdrawalJSON `json:"withdrawal"`
	USDCBalance money.Amount   `json:"usdc_balance"`
}

func (s *Server) deposit(ctx *fasthttp.RequestCtx, c *caller, body *depositRequest) error {
	amount, err := positiveAmount("amount", body.Amount)
	if err != nil {
		return err
	}
	if body.TxHash == "" {
		return fieldError("tx_hash", "is required")
	}
	return respond(ctx, fasthttp.StatusOK, depositResponseOf)(s.eng.Deposit(ctx,
		core.DepositRequest{Account: c.account, Amount: amount, TxHash: body.TxHash}))
}

func depositResponseOf(r core.TransferResult) depositResponse {
	return depositResponse{Deposit: depositOf(r.Transfer), USDCBalance: r.USDCBalance}
}

func (s *Server) withdraw(ctx *fasthttp.RequestCtx, c *caller, body *withdrawRequest) error {
	amount, err := positiveAmount("amount", body.Amount)
	if err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, withdrawResponseOf)(s.eng.Withdraw(ctx, c.account, amount))
}

func withdrawResponseOf(r core.TransferResult) withdrawResponse {
	return withdrawResponse{Withdrawal: withdrawalOf(r.Transfer), USDCBalance: r.USDCBalance}
}

// tokenBalanceJSON answers GET /api/token/balance (docs/API.md, "GET
// /api/token/balance"): the USDC balance, the wallet, the newest transfers and
// a page of the USDC ledger, shaped like the points ledger.
type tokenBalanceJSON struct {
	USDC          money.Amount `json:"usdc"`
	WalletAddress *string      `json:"wallet_address"`
	// DepositAddress is where to send USDC before POST
	// /api/token/deposit (-deposit-address; null when not set).
	DepositAddress *string          `json:"deposit_address"`
	Withdrawals    []withdrawalJSON `json:"withdrawals"`
	Deposits       []depositJSON    `json:"deposits"`
	ledgerPage
}

func (s *Server) tokenBalance(ctx *fasthttp.RequestCtx, c *caller) error {
	page, err := s.ledgerPage(ctx, c, money.USDC)
	if err != nil {
		return err
	}
	a, err := s.account(c)
	if err != nil {
		return err
	}
	out := tokenBalanceJSON{USDC: a.Balances[money.USDC], WalletAddress: optionalString(a.Info.Wallet),
		DepositAddress: optionalString(s.cfg.DepositAddress),
		Withdrawals:    []withdrawalJSON{}, Deposits: []depositJSON{}, ledgerPage: page}
	ws, _, _ := s.eng.Transfers(c.account, core.TransferWithdrawal, maxTransfersShown)
	for _, t := range ws {
		out.Withdrawals = append(out.Withdrawals, withdrawalOf(t))
	}
	ds, _, _ := s.eng.Transfers(c.account, core.TransferDeposit, maxTransfersShown)
	for _, t := range ds {
		out.Deposits = append(out.Deposits, depositOf(t))
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

package transport

import (
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
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

func depositOf(t core.Transfer) wire.Deposit {
	d := wire.Deposit{ID: t.ID, Amount: t.Amount, TxHash: t.TxHash, Status: t.Status.String(), CreatedAt: wire.Timestamp(t.Time),
		ResolvedAt: wire.OptionalTime(t.ResolvedAt)}
	if t.Claimed != 0 {
		claimed := t.Claimed
		d.ClaimedAmount = &claimed
	}
	return d
}

func withdrawalOf(t core.Transfer) wire.Withdrawal {
	return wire.Withdrawal{ID: t.ID, Amount: t.Amount, WalletAddress: t.Wallet, Status: t.Status.String(),
		TxHash: optionalString(t.ChainTx), CreatedAt: wire.Timestamp(t.Time), ResolvedAt: wire.OptionalTime(t.ResolvedAt)}
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

func depositResponseOf(r core.TransferResult) wire.DepositAnswer {
	return wire.DepositAnswer{Deposit: depositOf(r.Transfer), USDCBalance: r.USDCBalance}
}

func (s *Server) withdraw(ctx *fasthttp.RequestCtx, c *caller, body *withdrawRequest) error {
	amount, err := positiveAmount("amount", body.Amount)
	if err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, withdrawResponseOf)(s.eng.Withdraw(ctx, c.account, amount))
}

func withdrawResponseOf(r core.TransferResult) wire.WithdrawalAnswer {
	return wire.WithdrawalAnswer{Withdrawal: withdrawalOf(r.Transfer), USDCBalance: r.USDCBalance}
}

func (s *Server) tokenBalance(ctx *fasthttp.RequestCtx, c *caller) error {
	page, a, err := s.ledgerAndAccount(ctx, c, money.USDC)
	if err != nil {
		return err
	}
	out := wire.TokenBalance{USDC: a.Balances[money.USDC], WalletAddress: optionalString(a.Info.Wallet),
		DepositAddress: optionalString(s.cfg.DepositAddress),
		Withdrawals:    []wire.Withdrawal{}, Deposits: []wire.Deposit{}, LedgerPage: page}
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

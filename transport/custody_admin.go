package transport

import (
	"context"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// The admin's custody endpoints (docs/API.md, "Custody"): list the pending
// deposits and queued withdrawals of every account, confirm or reject a
// deposit, mark a withdrawal sent or failed. The routes take a session only.

// Paging of the admin's custody lists.
const (
	defaultCustodyLimit = 100
	maxCustodyLimit     = core.MaxOpenTransfersListed
)

type confirmDepositRequest struct {
	Amount strictjson.Number `json:"amount"`
}

type withdrawalSentRequest struct {
	TxHash *string `json:"tx_hash"`
}

// custodyDepositJSON is a deposit as the admin sees it: with its account.
type custodyDepositJSON struct {
	AgentID uuid.UUID `json:"agent_id"`
	wire.Deposit
}

// custodyWithdrawalJSON is a withdrawal as the admin sees it.
type custodyWithdrawalJSON struct {
	AgentID uuid.UUID `json:"agent_id"`
	wire.Withdrawal
}

type depositDecisionResponse struct {
	Deposit     custodyDepositJSON `json:"deposit"`
	USDCBalance money.Amount       `json:"usdc_balance"`
}

type withdrawalDecisionResponse struct {
	Withdrawal  custodyWithdrawalJSON `json:"withdrawal"`
	USDCBalance money.Amount          `json:"usdc_balance"`
}

type custodyList[T any] struct {
	Count  int `json:"count"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	Items  []T `json:"items"`
}

func custodyPage(ctx *fasthttp.RequestCtx) (limit, offset int, err error) {
	args := ctx.QueryArgs()
	if limit, err = intParam(args, "limit", defaultCustodyLimit, 1, maxCustodyLimit); err != nil {
		return 0, 0, err
	}
	offset, err = intParam(args, "offset", 0, 0, maxOffset)
	return limit, offset, err
}

func (s *Server) listDeposits(ctx *fasthttp.RequestCtx, _ *caller) error {
	return listCustody(ctx, s, core.TransferDeposit, custodyDepositOf)
}

func (s *Server) listWithdrawals(ctx *fasthttp.RequestCtx, _ *caller) error {
	return listCustody(ctx, s, core.TransferWithdrawal, custodyWithdrawalOf)
}

// listCustody answers a page of the open transfers of kind, each rendered
// by item.
func listCustody[T any](ctx *fasthttp.RequestCtx, s *Server, kind core.TransferKind, item func(core.AccountTransfer) T) error {
	limit, offset, err := custodyPage(ctx)
	if err != nil {
		return err
	}
	ts, total := s.eng.OpenTransfers(kind, limit, offset)
	out := custodyList[T]{Count: total, Limit: limit, Offset: offset, Items: []T{}}
	for _, t := range ts {
		out.Items = append(out.Items, item(t))
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

func (s *Server) confirmDeposit(ctx *fasthttp.RequestCtx, c *caller) error {
	return decideTransfer(ctx, c, func(d *core.TransferDecision) error {
		var body confirmDepositRequest
		if err := decodeBody(ctx, &body); err != nil {
			return err
		}
		var err error
		d.Amount, err = positiveAmount("amount", body.Amount)
		return err
	}, s.eng.ConfirmDeposit, depositDecisionOf)
}

func (s *Server) rejectDeposit(ctx *fasthttp.RequestCtx, c *caller) error {
	return decideTransfer(ctx, c, noFields(ctx), s.eng.RejectDeposit, depositDecisionOf)
}

func (s *Server) withdrawalSent(ctx *fasthttp.RequestCtx, c *caller) error {
	return decideTransfer(ctx, c, func(d *core.TransferDecision) error {
		var body withdrawalSentRequest
		if err := decodeBody(ctx, &body); err != nil {
			return err
		}
		if body.TxHash == nil {
			return fieldError("tx_hash", "is required")
		}
		d.ChainTx = *body.TxHash
		return nil
	}, s.eng.MarkWithdrawalSent, withdrawalDecisionOf)
}

func (s *Server) withdrawalFailed(ctx *fasthttp.RequestCtx, c *caller) error {
	return decideTransfer(ctx, c, noFields(ctx), s.eng.MarkWithdrawalFailed, withdrawalDecisionOf)
}

// decideTransfer answers an admin's decision on the transfer the path
// names: fields reads the body into the decision, decide is the engine's
// operation, render the answer.
func decideTransfer[A any](ctx *fasthttp.RequestCtx, c *caller, fields func(*core.TransferDecision) error,
	decide func(context.Context, core.TransferDecision) (core.AccountTransfer, money.Amount, error),
	render func(core.TransferDecided) A) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	d := core.TransferDecision{Admin: c.account, Transfer: id}
	if err := fields(&d); err != nil {
		return err
	}
	r, bal, err := decide(ctx, d)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, render(core.TransferDecided{AccountTransfer: r, USDCBalance: bal}))
}

// noFields reads the body of a decision without fields.
func noFields(ctx *fasthttp.RequestCtx) func(*core.TransferDecision) error {
	return func(*core.TransferDecision) error { return decodeEmpty(ctx) }
}

// decodeEmpty accepts no body or an empty JSON object: the decision
// endpoints without fields still refuse unknown ones.
func decodeEmpty(ctx *fasthttp.RequestCtx) error {
	if len(ctx.PostBody()) == 0 {
		return nil
	}
	var body struct{}
	return decodeBody(ctx, &body)
}

func depositDecisionOf(d core.TransferDecided) depositDecisionResponse {
	return depositDecisionResponse{Deposit: custodyDepositOf(d.AccountTransfer), USDCBalance: d.USDCBalance}
}

func custodyDepositOf(t core.AccountTransfer) custodyDepositJSON {
	return custodyDepositJSON{AgentID: t.Account, Deposit: depositOf(t.Transfer)}
}

func withdrawalDecisionOf(d core.TransferDecided) withdrawalDecisionResponse {
	return withdrawalDecisionResponse{Withdrawal: custodyWithdrawalOf(d.AccountTransfer), USDCBalance: d.USDCBalance}
}

func custodyWithdrawalOf(t core.AccountTransfer) custodyWithdrawalJSON {
	return custodyWithdrawalJSON{AgentID: t.Account, Withdrawal: withdrawalOf(t.Transfer)}
}

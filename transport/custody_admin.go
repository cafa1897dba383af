package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
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
	depositJSON
}

// custodyWithdrawalJSON is a withdrawal as the admin sees it.
type custodyWithdrawalJSON struct {
	AgentID uuid.UUID `json:"agent_id"`
	withdrawalJSON
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
	limit, offset, err := custodyPage(ctx)
	if err != nil {
		return err
	}
	ts, total := s.eng.OpenTransfers(core.TransferDeposit, limit, offset)
	out := custodyList[custodyDepositJSON]{Count: total, Limit: limit, Offset: offset, Items: []custodyDepositJSON{}}
	for _, t := range ts {
		out.Items = append(out.Items, custodyDepositJSON{AgentID: t.Account, depositJSON: depositOf(t.Transfer)})
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

func (s *Server) listWithdrawals(ctx *fasthttp.RequestCtx, _ *caller) error {
	limit, offset, err := custodyPage(ctx)
	if err != nil {
		return err
	}
	ts, total := s.eng.OpenTransfers(core.TransferWithdrawal, limit, offset)
	out := custodyList[custodyWithdrawalJSON]{Count: total, Limit: limit, Offset: offset, Items: []custodyWithdrawalJSON{}}
	for _, t := range ts {
		out.Items = append(out.Items, custodyWithdrawalJSON{AgentID: t.Account, withdrawalJSON: withdrawalOf(t.Transfer)})
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

func (s *Server) confirmDeposit(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	var body confirmDepositRequest
	if err := decodeBody(ctx, &body); err != nil {
		return err
	}
	amount, err := positiveAmount("amount", body.Amount)
	if err != nil {
		return err
	}
	r, bal, err := s.eng.ConfirmDeposit(ctx, core.TransferDecision{Admin: c.account, Transfer: id, Amount: amount})
	if err != nil {
		return err
	}
	return writeDepositDecision(ctx, r, bal)
}

func (s *Server) rejectDeposit(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	if err := decodeEmpty(ctx); err != nil {
		return err
	}
	r, bal, err := s.eng.RejectDeposit(ctx, core.TransferDecision{Admin: c.account, Transfer: id})
	if err != nil {
		return err
	}
	return writeDepositDecision(ctx, r, bal)
}

func (s *Server) withdrawalSent(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	var body withdrawalSentRequest
	if err := decodeBody(ctx, &body); err != nil {
		return err
	}
	if body.TxHash == nil {
		return fieldError("tx_hash", "is required")
	}
	r, bal, err := s.eng.MarkWithdrawalSent(ctx, core.TransferDecision{Admin: c.account, Transfer: id, ChainTx: *body.TxHash})
	if err != nil {
		return err
	}
	return writeWithdrawalDecision(ctx, r, bal)
}

func (s *Server) withdrawalFailed(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	if err := decodeEmpty(ctx); err != nil {
		return err
	}
	r, bal, err := s.eng.MarkWithdrawalFailed(ctx, core.TransferDecision{Admin: c.account, Transfer: id})
	if err != nil {
		return err
	}
	return writeWithdrawalDecision(ctx, r, bal)
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

func writeDepositDecision(ctx *fasthttp.RequestCtx, r core.AccountTransfer, bal money.Amount) error {
	return writeJSON(ctx, fasthttp.StatusOK, depositDecisionOf(core.TransferDecided{AccountTransfer: r, USDCBalance: bal}))
}

func depositDecisionOf(d core.TransferDecided) depositDecisionResponse {
	return depositDecisionResponse{
		Deposit: custodyDepositJSON{AgentID: d.Account, depositJSON: depositOf(d.Transfer)}, USDCBalance: d.USDCBalance}
}

func writeWithdrawalDecision(ctx *fasthttp.RequestCtx, r core.AccountTransfer, bal money.Amount) error {
	return writeJSON(ctx, fasthttp.StatusOK, withdrawalDecisionOf(core.TransferDecided{AccountTransfer: r, USDCBalance: bal}))
}

func withdrawalDecisionOf(d core.TransferDecided) withdrawalDecisionResponse {
	return withdrawalDecisionResponse{
		Withdrawal: custodyWithdrawalJSON{AgentID: d.Account, withdrawalJSON: withdrawalOf(d.Transfer)}, USDCBalance: d.USDCBalance}
}

package transport

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/wire"
)

// Paging of notifications: one page, newest first.
const (
	defaultNotesLimit = 50
	maxNotesLimit     = core.MaxNotes
)

// noteDataJSON is a notification's data: only the fields of its kind are
// present.
type noteDataJSON struct {
	MarketID   *uuid.UUID    `json:"market_id,omitempty"`
	Title      string        `json:"title,omitempty"`
	ProposalID *uuid.UUID    `json:"proposal_id,omitempty"`
	Outcome    string        `json:"outcome,omitempty"`
	AgentID    *uuid.UUID    `json:"agent_id,omitempty"`
	Name       string        `json:"name,omitempty"`
	TransferID *uuid.UUID    `json:"transfer_id,omitempty"`
	Currency   string        `json:"currency,omitempty"`
	Amount     *money.Amount `json:"amount,omitempty"`
}

type noteJSON struct {
	ID        uint64         `json:"id"`
	Kind      string         `json:"kind"`
	Message   string         `json:"message"`
	Data      noteDataJSON   `json:"data"`
	Read      bool           `json:"read"`
	CreatedAt wire.Timestamp `json:"created_at"`
}

type notesJSON struct {
	Count         int        `json:"count"`
	Unread        int        `json:"unread"`
	Notifications []noteJSON `json:"notifications"`
}

func (s *Server) notifications(ctx *fasthttp.RequestCtx, c *caller) error {
	args := ctx.QueryArgs()
	limit, err := intParam(args, "limit", defaultNotesLimit, 1, maxNotesLimit)
	if err != nil {
		return err
	}
	unreadOnly := false
	if v := args.Peek("unread"); v != nil {
		switch string(v) {
		case "true":
			unreadOnly = true
		case "false":
		default:
			return fieldError("unread", "must be true or false")
		}
	}
	pg, ok := s.eng.Notes(c.account, unreadOnly, limit)
	if !ok {
		return core.ErrAccountNotFound
	}
	out := notesJSON{Count: pg.Matched, Unread: pg.Unread, Notifications: make([]noteJSON, 0, len(pg.Notes))}
	for i := range pg.Notes {
		out.Notifications = append(out.Notifications, s.noteOf(&pg.Notes[i]))
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

// noteOf renders a notification: its data from the fields its kind uses,
// its message from the data. Names and titles are read now, so they are
// the current ones.
func (s *Server) noteOf(n *core.Note) noteJSON {
	j := noteJSON{ID: n.ID, Kind: n.Kind.String(), Read: n.Read, CreatedAt: wire.Timestamp(n.Time)}
	d := &j.Data
	title := ""
	if n.Market != uuid.Nil {
		m := n.Market
		d.MarketID = &m
		if v, ok := s.eng.Market(m); ok {
			title = v.Info.Title
			d.Title = title
		}
	}
	amount := func() {
		a := n.Amount
		d.Amount, d.Currency = &a, n.Currency.String()
	}
	ref := n.Ref
	switch n.Kind {
	case core.NoteMarketSettled:
		d.Outcome = n.Outcome.String()
		amount()
		j.Message = fmt.Sprintf("Market %q resolved %s; your payout: %s %s", title, d.Outcome, n.Amount, currencyLabel(n.Currency))
	case core.NoteMarketClosed:
		j.Message = fmt.Sprintf("Market %q closed for trading", title)
	case core.NoteOracleProposed, core.NoteOracleChallenged, core.NoteOracleResolved:
		d.ProposalID, d.Outcome = &ref, n.Outcome.String()
		verb := map[core.NoteKind]string{core.NoteOracleProposed: "proposed", core.NoteOracleChallenged: "challenged",
			core.NoteOracleResolved: "resolved"}[n.Kind]
		j.Message = fmt.Sprintf("Oracle: resolution %s of market %q %s", d.Outcome, title, verb)
	case core.NoteReferralApplied:
		d.AgentID = &ref
		if a, ok := s.eng.Account(ref); ok {
			d.Name = a.Info.Name
		}
		amount()
		j.Message = fmt.Sprintf("Referral with %s applied; bonus: %s %s", d.Name, n.Amount, currencyLabel(n.Currency))
	case core.NoteDepositCredited:
		d.TransferID = &ref
		amount()
		j.Message = fmt.Sprintf("Deposit of %s %s credited", n.Amount, currencyLabel(n.Currency))
	case core.NoteWithdrawalQueued, core.NoteDepositPending, core.NoteDepositRejected, core.NoteWithdrawalSent, core.NoteWithdrawalFailed:
		d.TransferID = &ref
		amount()
		what := map[core.NoteKind]string{core.NoteWithdrawalQueued: "Withdrawal of %s %s queued",
			core.NoteDepositPending:  "Deposit of %s %s pending until custody confirms it",
			core.NoteDepositRejected: "Deposit of %s %s rejected by custody", core.NoteWithdrawalSent: "Withdrawal of %s %s sent",
			core.NoteWithdrawalFailed: "Withdrawal of %s %s failed and refunded"}[n.Kind]
		j.Message = fmt.Sprintf(what, n.Amount, currencyLabel(n.Currency))
	}
	return j
}

// currencyLabel is a currency as people write it: KP, USDC.
func currencyLabel(c money.Currency) string { return strings.ToUpper(c.String()) }

type markNotesRequest struct {
	IDs *[]uint64 `json:"ids"`
	All *bool     `json:"all"`
}

type markNotesJSON struct {
	Updated int `json:"updated"`
}

func (s *Server) markNotifications(ctx *fasthttp.RequestCtx, c *caller, body *markNotesRequest) error {
	var ids []uint64
	switch {
	case body.IDs != nil && body.All != nil:
		return badRequest("Give either ids or all, not both")
	case body.All != nil:
		if !*body.All {
			return fieldError("all", "must be true")
		}
	case body.IDs != nil:
		ids = *body.IDs
		if len(ids) == 0 {
			return fieldError("ids", "must not be empty")
		}
	default:
		return badRequest("Give ids or all")
	}
	return respond(ctx, fasthttp.StatusOK, markedOf)(s.eng.MarkNotesRead(ctx, c.account, ids, body.All != nil))
}

func markedOf(n int) markNotesJSON { return markNotesJSON{Updated: n} }

package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/wire"
)

type settleResponse struct {
	MarketID      uuid.UUID    `json:"market_id"`
	Outcome       string       `json:"outcome"`
	PositionsPaid int          `json:"positions_paid"`
	TotalPaid     money.Amount `json:"total_paid"`
	TotalPaidUSDC money.Amount `json:"total_paid_usdc"`
}

func (s *Server) settle(ctx *fasthttp.RequestCtx, _ *caller, body *marketOutcome) error {
	market, outcome, err := body.parse()
	if err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, settleResponseOf)(s.eng.Settle(ctx, core.SettleRequest{Market: market, Outcome: outcome}))
}

// settleResponseOf is the answer of POST /api/admin/settle.
func settleResponseOf(r core.SettleResult) settleResponse {
	return settleResponse{
		MarketID:      r.Market,
		Outcome:       r.Outcome.String(),
		PositionsPaid: r.PositionsPaid,
		TotalPaid:     r.TotalPaid[money.KP],
		TotalPaidUSDC: r.TotalPaid[money.USDC],
	}
}

type perCurrency[T any] struct {
	KP   T `json:"kp"`
	USDC T `json:"usdc"`
}

type marketCounts struct {
	Active   int `json:"active"`
	Closed   int `json:"closed"`
	Resolved int `json:"resolved"`
	Closing  int `json:"closing"`
	Settling int `json:"settling"`
	Total    int `json:"total"`
}

type logJSON struct {
	FirstSeq   uint64 `json:"first_seq"`
	LastSeq    uint64 `json:"last_seq"`
	DurableSeq uint64 `json:"durable_seq"`
	Records    uint64 `json:"records_written"`
	Batches    uint64 `json:"batches"`
	Fsyncs     uint64 `json:"fsyncs"`
}

type snapshotJSON struct {
	FromSeq    uint64         `json:"from_seq"`
	ThroughSeq uint64         `json:"through_seq"`
	CreatedAt  wire.Timestamp `json:"created_at"`
}

type platformStats struct {
	Accounts       int                       `json:"accounts"`
	Markets        marketCounts              `json:"markets"`
	Trades         perCurrency[uint64]       `json:"trades"`
	Volume         perCurrency[money.Amount] `json:"volume"`
	OpenInterest   perCurrency[money.Amount] `json:"open_interest"`
	ActiveKeys     int                       `json:"active_keys"`
	ActiveSessions int                       `json:"active_sessions"`
	WAL            *logJSON                  `json:"wal"`
	Snapshot       *snapshotJSON             `json:"snapshot"`
}

func (s *Server) stats(ctx *fasthttp.RequestCtx, _ *caller) error {
	st := s.eng.Stats()
	out := platformStats{
		Accounts: st.Accounts,
		Markets: marketCounts{
			Active:   st.Markets[core.StatusActive],
			Closed:   st.Markets[core.StatusClosed],
			Resolved: st.Markets[core.StatusResolved],
			Closing:  st.Markets[core.StatusClosing],
			Settling: st.Markets[core.StatusSettling],
		},
		Trades:         perCurrency[uint64]{st.Trades[money.KP], st.Trades[money.USDC]},
		Volume:         perCurrency[money.Amount]{st.Volume[money.KP], st.Volume[money.USDC]},
		OpenInterest:   perCurrency[money.Amount]{st.OpenInterest[money.KP], st.OpenInterest[money.USDC]},
		ActiveKeys:     st.ActiveKeys,
		ActiveSessions: st.ActiveSessions,
	}
	for _, n := range st.Markets {
		out.Markets.Total += n
	}
	if s.cfg.Status != nil {
		p := s.cfg.Status.Positions()
		out.WAL = &logJSON{FirstSeq: p.LogFirstSeq, LastSeq: p.LogLastSeq, DurableSeq: p.LogDurableSeq,
			Records: p.LogRecords, Batches: p.LogBatches, Fsyncs: p.LogFsyncs}
		if p.SnapshotThrough != 0 {
			out.Snapshot = &snapshotJSON{FromSeq: p.SnapshotFrom, ThroughSeq: p.SnapshotThrough, CreatedAt: wire.Timestamp(p.SnapshotAt)}
		}
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

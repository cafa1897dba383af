package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core/money"
)

// Paging of the leaderboard (docs/API.md, "GET /api/leaderboard"): one page,
// from the top.
const (
	defaultLeaderboardLimit = 50
	maxLeaderboardLimit     = 500
)

// leaderJSON is one line of the leaderboard; amounts are in KP.
type leaderJSON struct {
	Rank    int          `json:"rank"`
	AgentID uuid.UUID    `json:"agent_id"`
	Name    string       `json:"name"`
	Profit  money.Amount `json:"profit"`
	Volume  money.Amount `json:"volume"`
}

type leaderboardJSON struct {
	Count   int          `json:"count"`
	Leaders []leaderJSON `json:"leaders"`
}

// leaderboard answers GET /api/leaderboard from the engine's cached
// ranking: count is the number of ranked accounts, leaders the first limit
// of them, ranked from 1.
func (s *Server) leaderboard(ctx *fasthttp.RequestCtx, _ *caller) error {
	limit, err := intParam(ctx.QueryArgs(), "limit", defaultLeaderboardLimit, 1, maxLeaderboardLimit)
	if err != nil {
		return err
	}
	total, leaders := s.eng.Leaderboard(limit)
	out := leaderboardJSON{Count: total, Leaders: make([]leaderJSON, 0, len(leaders))}
	for i, l := range leaders {
		out.Leaders = append(out.Leaders, leaderJSON{Rank: i + 1, AgentID: l.Account, Name: l.Name,
			Profit: l.Profit, Volume: l.Volume})
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

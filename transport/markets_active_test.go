package transport

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"marketd/core"
	"marketd/transport/wire"
)

// TestActiveMarketsPaging checks that GET /api/markets/active answers at
// most maxActiveLimit markets, newest first, with count the total, and
// takes limit and offset (docs/API.md, "GET /api/markets/active"). Before the page
// bound it answered all 1,001 markets in one body.
func TestActiveMarketsPaging(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	ts.admin()
	adm, _ := ts.eng.AccountByName("admin")
	const n = maxActiveLimit + 1
	closes := clk.Now().Add(24 * time.Hour)
	newestFirst := make([]string, n)
	for i := range n {
		clk.Advance(time.Millisecond)
		v, err := ts.eng.CreateMarket(context.Background(), core.NewMarket{Creator: adm.ID,
			Title: fmt.Sprintf("market %d", i), Category: "test", ClosesAt: closes})
		if err != nil {
			t.Fatal(err)
		}
		newestFirst[n-1-i] = v.ID.String()
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", newestFirst[:maxActiveLimit]},
		{"?offset=1000", newestFirst[1000:]},
		{"?limit=2&offset=3", newestFirst[3:5]},
		{"?offset=5000", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ts := ts.sub(t)
			var l wire.MarketList
			ts.decode(ts.do("GET", "/api/markets/active"+tt.query, auth{}, ""), http.StatusOK, &l)
			if got := marketIDs(l); l.Count != n || !slices.Equal(got, tt.want) && len(got)+len(tt.want) > 0 {
				t.Errorf("count %d, %d markets; want %d, %d", l.Count, len(got), n, len(tt.want))
			}
		})
	}
	for q, field := range map[string]string{"?limit=0": "limit", "?limit=1001": "limit", "?offset=-1": "offset", "?limit=x": "limit"} {
		ts.expectField(ts.do("GET", "/api/markets/active"+q, auth{}, ""), field)
	}
}

package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"marketd/bench/baseline"
	"marketd/bench/client"
)

func TestParseMix(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{in: DefaultMix, want: DefaultMix},
		{in: "buy=1", want: "buy=1"},
		{in: "sell=2, buy=1", want: "buy=1,sell=2"},
		{in: "buy=0", bad: true},
		{in: "buy", bad: true},
		{in: "sleep=1", bad: true},
		{in: "buy=-1", bad: true},
		{in: "buy=x", bad: true},
	} {
		t.Run(c.in, func(t *testing.T) {
			m, err := ParseMix(c.in)
			if (err != nil) != c.bad {
				t.Fatalf("ParseMix(%q): error %v, want error %v", c.in, err, c.bad)
			}
			if err == nil && m.String() != c.want {
				t.Errorf("ParseMix(%q) = %s, want %s", c.in, m, c.want)
			}
		})
	}
}

func TestSkew(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for _, c := range []struct {
		kind    string
		markets int
		share   float64
		// check says what is wrong with counts, "" when nothing.
		check func(counts []int, n int) string
	}{
		{"hot", 8, 1, func(counts []int, n int) string {
			if counts[0] != n {
				return "a hot share of 1 must send everything to market 0"
			}
			return ""
		}},
		{"hot", 1, 0.5, func(counts []int, n int) string {
			if counts[0] != n {
				return "one market takes everything"
			}
			return ""
		}},
		{"uniform", 4, 0, func(counts []int, n int) string {
			for _, k := range counts {
				if k < n/8 {
					return "a market got less than half its share"
				}
			}
			return ""
		}},
		{"zipf", 8, 0, func(counts []int, n int) string {
			if counts[0] <= counts[7] {
				return "market 0 must be the most frequent"
			}
			return ""
		}},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.kind, c.markets), func(t *testing.T) {
			s, err := NewSkew(c.kind, c.markets, c.share, 1.1)
			if err != nil {
				t.Fatal(err)
			}
			const n = 10_000
			counts := make([]int, c.markets)
			for range n {
				counts[s.pick(r)]++
			}
			if msg := c.check(counts, n); msg != "" {
				t.Errorf("%s over %d draws: counts %v: %s", s, n, counts, msg)
			}
		})
	}
	if _, err := NewSkew("pareto", 2, 0, 0); err == nil {
		t.Error("NewSkew(pareto): no error")
	}
}

// TestPlanSendsOnlyWhatTheBotHolds: a sell or a merge is drawn only for
// shares the bot holds.
func TestPlanSendsOnlyWhatTheBotHolds(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	mix, err := ParseMix("sell=1,merge=1")
	if err != nil {
		t.Fatal(err)
	}
	skew, err := NewSkew("uniform", 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := &botState{shares: make([][2]int64, 3)}
	for i := range 1000 {
		p := plan(r, mix, skew, b)
		held := b.shares[p.market]
		switch {
		case p.op == OpSell && held[p.side] <= 0:
			t.Fatalf("draw %d: sell of side %d of market %d holding %v", i, p.side, p.market, held)
		case p.op == OpMerge && (held[0] <= 0 || held[1] <= 0):
			t.Fatalf("draw %d: merge in market %d holding %v", i, p.market, held)
		}
		apply(b, p)
	}
}

// serveCounting serves handler on a loopback port until the test ends.
func serveCounting(t *testing.T, handler fasthttp.RequestHandler) *client.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := baseline.Serve(ln, "test", handler)
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	c := client.New(srv.Addr(), 16, 10*time.Second)
	t.Cleanup(c.Close)
	return c
}

func testFixture(bots, markets int) *Fixture {
	fx := &Fixture{}
	for i := range bots {
		fx.Bots = append(fx.Bots, &Bot{Name: fmt.Sprintf("bot%d", i), Key: client.Key{Key: fmt.Sprintf("svc_live_%032x", i)}})
	}
	for i := range markets {
		fx.Markets = append(fx.Markets, fmt.Sprintf("00000000-0000-4000-8000-%012x", i))
	}
	return fx
}

// serveNoop serves the no-op handler on a loopback port until the test
// ends, counting the requests it answers, and returns the default mix and
// a uniform skew over 2 markets to drive it with.
func serveNoop(t *testing.T) (c *client.Client, served *atomic.Int64, mix Mix, skew Skew) {
	t.Helper()
	served = new(atomic.Int64)
	c = serveCounting(t, func(ctx *fasthttp.RequestCtx) {
		served.Add(1)
		baseline.AnswerNoop(ctx)
	})
	mix, _ = ParseMix(DefaultMix)
	skew, _ = NewSkew("uniform", 2, 0, 0)
	return c, served, mix, skew
}

// TestRunCountsEveryRequest: against the no-op handler, every request is
// counted once, in the totals, by status and in the time series.
func TestRunCountsEveryRequest(t *testing.T) {
	c, served, mix, skew := serveNoop(t)
	tg := NewTarget("noop", c, testFixture(4, 2))
	r, err := Run(context.Background(), tg, Options{Conns: 4, Duration: 300 * time.Millisecond, Mix: mix, Skew: skew, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var series int64
	for _, s := range r.Series {
		series += s.OK + s.Errors
	}
	if r.Requests == 0 || r.Requests != served.Load() || r.OK != r.Requests || series != r.Requests ||
		r.ByStatus["200"] != r.Requests || r.Histogram().TotalCount() != r.Requests {
		t.Errorf("requests %d, served %d, ok %d, in the series %d, by status %v, in the histogram %d: want all equal",
			r.Requests, served.Load(), r.OK, series, r.ByStatus, r.Histogram().TotalCount())
	}
}

// TestOpenLoopMeasuresFromTheDueTime: while the server stalls, the open
// loop's requests fall behind their schedule; their latency runs from
// when they were due, so the stall shows in full in the maximum, and they
// are counted late. A closed loop would record the stalled requests only,
// each at most the stall.
func TestOpenLoopMeasuresFromTheDueTime(t *testing.T) {
	const stall = 300 * time.Millisecond
	var stalled atomic.Bool
	c := serveCounting(t, func(ctx *fasthttp.RequestCtx) {
		if stalled.CompareAndSwap(false, true) {
			time.Sleep(stall) // the server's stall, not a synchronization
		}
		baseline.AnswerNoop(ctx)
	})
	mix, _ := ParseMix("active=1")
	skew, _ := NewSkew("uniform", 1, 0, 0)
	tg := NewTarget("stall", c, testFixture(1, 1))
	r, err := Run(context.Background(), tg, Options{Conns: 1, Duration: time.Second, Rate: 200, Mix: mix, Skew: skew, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The request due right after the stalled one waited for it: its
	// latency from its due time is at least the stall less its 5 ms
	// interval.
	if r.Latency.Max < float64(stall/time.Millisecond)-5 || r.Late == 0 {
		t.Errorf("max latency %.3f ms, late %d: want at least %v and some late", r.Latency.Max, r.Late, stall)
	}
	if got := r.Requests + r.NotSent; got != 200 {
		t.Errorf("sent %d + not sent %d = %d, want the 200 due", r.Requests, r.NotSent, got)
	}
}

// TestRunCountsErrorsByStatus: answers other than 2xx are counted by
// status in the totals and in every second of the series.
func TestRunCountsErrorsByStatus(t *testing.T) {
	var n atomic.Int64
	c := serveCounting(t, func(ctx *fasthttp.RequestCtx) {
		if n.Add(1)%3 == 0 {
			ctx.Error(`{"error":"Rate limit exceeded"}`, fasthttp.StatusTooManyRequests)
			return
		}
		baseline.AnswerNoop(ctx)
	})
	mix, _ := ParseMix("me=1")
	skew, _ := NewSkew("uniform", 1, 0, 0)
	r, err := Run(context.Background(), NewTarget("limited", c, testFixture(2, 1)),
		Options{Conns: 2, Duration: 200 * time.Millisecond, Mix: mix, Skew: skew, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var inSeries int64
	for _, s := range r.Series {
		inSeries += s.ErrorsByStatus["429"]
	}
	if r.ByStatus["429"] == 0 || r.ByStatus["429"] != r.Errors() || inSeries != r.Errors() || r.Requests != n.Load() {
		t.Errorf("by status %v, errors %d, 429s in the series %d, requests %d, served %d", r.ByStatus, r.Errors(), inSeries, r.Requests, n.Load())
	}
}

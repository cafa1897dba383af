package load

import (
	"sync/atomic"

	"marketd/bench/client"
)

// Target is a server the load is sent to, with what each bot holds there
// as the answers of this server said.
type Target struct {
	Name   string
	Client *client.Client
	// Markets are the market IDs sent (those of the fixture).
	Markets []string
	// ServerPid is the server's process when it runs on this machine as
	// a process of its own, 0 otherwise; ServerInProcess is true when the
	// server is served by this process. Each run reports their CPU time
	// per request (Result.CPU).
	ServerPid       int
	ServerInProcess bool
	bots            []*botState
	// unanswered counts the requests that got no answer, in every run
	// (warmups included): the server may or may not have applied them.
	unanswered atomic.Int64
}

// Unanswered returns how many requests got no answer so far.
func (t *Target) Unanswered() int64 { return t.unanswered.Load() }

// botState is one bot as its worker sees it on one target.
type botState struct {
	bot *Bot
	// authorization is the bot's Authorization header value.
	authorization string
	// shares[m] holds the whole yes and no shares of market m.
	shares [][2]int64
}

// NewTarget returns a target of the fixture's bots and markets at the
// client's server. Each target keeps its own holdings, so that the
// baseline handlers' answers do not count as shares on marketd.
func NewTarget(name string, c *client.Client, fx *Fixture) *Target {
	t := &Target{Name: name, Client: c, Markets: fx.Markets}
	for _, b := range fx.Bots {
		t.bots = append(t.bots, &botState{bot: b, authorization: "Bearer " + b.Key.Key,
			shares: make([][2]int64, len(fx.Markets))})
	}
	return t
}

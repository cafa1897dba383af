package load

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"marketd/bench/client"
)

const (
	// AdminName is the account marketd creates with the admin role.
	AdminName = "admin"
	// setupParallel bounds the registrations in flight at once: the
	// server hashes passwords on a bounded pool and refuses beyond it.
	setupParallel = 8
	// marketLifetime is how far in the future the load's markets close:
	// far beyond any run.
	marketLifetime = 30 * 24 * time.Hour
	// unlimitedTier is the rate-limit tier the load's keys need so that
	// the server's limits do not throttle the load.
	unlimitedTier = "unlimited"
)

// Bot is one simulated account with its session and its API key.
type Bot struct {
	Name, Password string
	Session        string
	Key            client.Key
	Agent          client.Agent
}

// Credentials returns the bot's key as credentials.
func (b *Bot) Credentials() client.Credentials { return client.Credentials{Key: b.Key.Key} }

// Fixture is what Setup created: the bots and the markets.
type Fixture struct {
	Bots    []*Bot
	Markets []string
	// Admin is the admin's session.
	Admin string
	// Throttled is true when the keys did not get the unlimited tier
	// (the server's -default-tier), so that rate limits may refuse the
	// load's requests.
	Throttled bool
}

// SetupOptions says what Setup creates.
type SetupOptions struct {
	Bots, Markets int
	// AdminPassword logs in as the admin, who creates the markets.
	AdminPassword string
}

// Setup logs in as the admin, creates the markets, then registers the
// bots (names with a random part, so that runs against one server do not
// collide) and creates a read and trade key for each.
func Setup(ctx context.Context, c *client.Client, o SetupOptions) (*Fixture, error) {
	admin, _, err := c.Login(AdminName, o.AdminPassword)
	if err != nil {
		return nil, fmt.Errorf("load: log in as %s: %w", AdminName, err)
	}
	fx := &Fixture{Admin: admin, Markets: make([]string, o.Markets), Bots: make([]*Bot, o.Bots)}
	var run [6]byte
	_, _ = rand.Read(run[:])
	runID := hex.EncodeToString(run[:])
	for i := range fx.Markets {
		m, err := c.CreateMarket(client.Credentials{Session: admin}, fmt.Sprintf("Load %s market %d", runID, i), marketLifetime)
		if err != nil {
			return nil, fmt.Errorf("load: create market %d: %w", i, err)
		}
		fx.Markets[i] = m.ID.String()
	}
	errs := make([]error, len(fx.Bots))
	slots := make(chan struct{}, setupParallel)
	var wg sync.WaitGroup
	for i := range fx.Bots {
		if err := ctx.Err(); err != nil {
			errs[i] = err
			break
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			fx.Bots[i], errs[i] = NewBot(c, fmt.Sprintf("ld-%s-%05d", runID, i))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, b := range fx.Bots {
		fx.Throttled = fx.Throttled || b.Key.RateLimitTier != unlimitedTier
	}
	return fx, nil
}

// NewBot registers an account named name with a random password and
// creates its read and trade key.
func NewBot(c *client.Client, name string) (*Bot, error) {
	var pw [12]byte
	_, _ = rand.Read(pw[:])
	b := &Bot{Name: name, Password: hex.EncodeToString(pw[:])}
	var err error
	if b.Session, b.Agent, err = c.Register(b.Name, b.Password); err != nil {
		return nil, fmt.Errorf("load: register %s: %w", name, err)
	}
	if b.Key, err = c.CreateKey(b.Session, client.KeyRequest{Name: "load", Scopes: []string{"read", "trade"}}); err != nil {
		return nil, fmt.Errorf("load: create the key of %s: %w", name, err)
	}
	return b, nil
}

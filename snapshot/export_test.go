package snapshot

import (
	"context"
	"time"
)

// TakePaced is Take resting after each chunk as Run does, with a share of
// one core of share, and its accounts at Options.ThreadNice as Run's.
func (m *Manager) TakePaced(ctx context.Context, share float64) (Header, error) {
	return m.take(ctx, newPacer(share, m.opts.ThreadNice), 0)
}

// TakeMeasured is TakePaced that also returns the longest work between two
// yields or rests (pacer.longest).
func (m *Manager) TakeMeasured(ctx context.Context, share float64) (Header, time.Duration, error) {
	p := newPacer(share, m.opts.ThreadNice)
	h, err := m.take(ctx, p, 0)
	return h, p.longest, err
}

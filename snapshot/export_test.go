package snapshot

import "context"

// TakePaced is Take resting after each chunk as Run does, with a share of
// one core of share.
func (m *Manager) TakePaced(ctx context.Context, share float64) (Header, error) {
	return m.take(ctx, newPacer(share))
}

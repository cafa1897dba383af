package core

import "context"

// FlushKeyUsageBatch is FlushKeyUsage with at most batchKeys keys per
// record, so that tests cover the split into several records without
// 50,000 keys.
func FlushKeyUsageBatch(ctx context.Context, e *Engine, batchKeys int) (int, error) {
	return e.flushUsage(ctx, batchKeys)
}

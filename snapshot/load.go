package snapshot

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"marketd/core"
	"marketd/wal/record"
)

// decodeAheadPerWorker bounds the chunks decoded and not yet passed to fn,
// per worker: a chunk of 4,096 accounts (snapshot.DefaultChunkObjects)
// decodes to a few MB.
const decodeAheadPerWorker = 2

// decodeChunks decodes the chunks on every core and calls fn with their
// records in order, on the caller's goroutine: decoding was a third of
// loading a snapshot, and fn (core.State.LoadImage) must see the chunks in
// their order. It returns the first error in chunk order: a decoding error
// after fn has seen every chunk before it, or fn's.
func decodeChunks(chunks []chunkFrame, fn func(*core.Record) error) error {
	if len(chunks) == 0 {
		return nil
	}
	type result struct {
		rec  *core.Record
		err  error
		done chan struct{}
	}
	results := make([]result, len(chunks))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), len(chunks))
	ahead := make(chan struct{}, workers*decodeAheadPerWorker) // a slot per chunk decoded and not yet passed to fn
	quit := make(chan struct{})
	var next atomic.Int64 // the next chunk to decode
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case ahead <- struct{}{}:
				case <-quit:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(chunks) {
					return
				}
				c, r := &chunks[i], &results[i]
				r.rec, r.err = record.DecodeVersion(c.version, c.payload)
				if r.err == nil && r.rec.Kind != core.KindImage {
					r.err = fmt.Errorf("kind %d is not an image", r.rec.Kind)
				}
				close(r.done)
			}
		})
	}
	defer wg.Wait()
	defer close(quit)
	for i := range results {
		r := &results[i]
		<-r.done
		if r.err != nil {
			return fmt.Errorf("%w: chunk %d: %w", ErrCorrupt, chunks[i].n, r.err)
		}
		if err := fn(r.rec); err != nil {
			return fmt.Errorf("snapshot: chunk %d: %w", chunks[i].n, err)
		}
		r.rec = nil // fn is done with it: let the collector have it
		<-ahead
	}
	return nil
}

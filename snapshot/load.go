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
// after fn has seen every chunk before it, or fn's. With ar not nil the
// records are decoded into ar's memory, which fn's side hands back by
// ar.release.
func decodeChunks(chunks []chunkFrame, fn func(*core.Record) error, ar *arenas) error {
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
				if ar != nil {
					r.rec, r.err = ar.decode(c.version, c.payload)
				} else {
					r.rec, r.err = record.DecodeVersion(c.version, c.payload)
				}
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

// loaderArenas is the number of arenas a load keeps for reuse beyond the
// chunks decoded ahead (decodeAheadPerWorker per core): for those the
// state's loader holds, a few, each about 3 MB for 4,096 accounts.
const loaderArenas = 8

// arenas is the memory a snapshot's records are decoded into
// (record.Arena), each used again once the loader is done with its record:
// a new one for every chunk was 800 MB of memory for 1,000,000 accounts,
// copied into the state and dropped, every page of it faulted in from the
// kernel (docs/PERFORMANCE.md, "Time to ready"). Safe for concurrent use.
type arenas struct {
	free  chan *record.Arena
	mu    sync.Mutex
	inUse map[*core.Record]*record.Arena // guarded by mu
}

func newArenas() *arenas {
	kept := runtime.GOMAXPROCS(0)*decodeAheadPerWorker + loaderArenas
	return &arenas{free: make(chan *record.Arena, kept), inUse: make(map[*core.Record]*record.Arena)}
}

// decode decodes a chunk's record into a free arena, or a new one.
func (p *arenas) decode(version byte, payload []byte) (*core.Record, error) {
	var a *record.Arena
	select {
	case a = <-p.free:
	default:
		a = new(record.Arena)
	}
	rec, err := record.DecodeArena(a, version, payload)
	if err != nil {
		p.put(a)
		return nil, err
	}
	p.mu.Lock()
	p.inUse[rec] = a
	p.mu.Unlock()
	return rec, nil
}

// release makes the memory of rec, which decode returned, free for
// another chunk: its reader is done with it.
func (p *arenas) release(rec *core.Record) {
	p.mu.Lock()
	a := p.inUse[rec]
	delete(p.inUse, rec)
	p.mu.Unlock()
	if a != nil {
		p.put(a)
	}
}

// put keeps a for reuse, or drops it when the free list is full.
func (p *arenas) put(a *record.Arena) {
	select {
	case p.free <- a:
	default:
	}
}

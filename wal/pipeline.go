package wal

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"marketd/core"
	"marketd/wal/record"
)

// Replay runs in three stages, so that decoding runs beside fn applying
// the records: a producer goroutine reads the segments and splits them
// into chunks of consecutive records, decoding workers decode the chunks,
// and the caller's goroutine calls fn on the records in seq order as the
// chunks come back, so fn runs on one goroutine, in order, as in a
// sequential replay. Decoding a trade record costs about as much CPU as
// applying it (0.4-0.5 us each on the 2-vCPU machine here).
//
// The caller's goroutine does nothing but apply: in the first version it
// also split the segments and handed the chunks to the workers, and a
// trace of a 500,000-record replay showed it runnable but not running for
// most of the time, behind the workers its sends had woken (0.9 s of
// scheduling delay in a 1.2 s replay): replay used one core of two.
const (
	// replayChunkRecords is the size of one worker's unit: large enough to
	// make the hand-over cost negligible, small enough to keep all workers
	// busy on a short log.
	replayChunkRecords = 256
	// replayChunksPerWorker bounds the chunks in flight, and so the decoded
	// records waiting for fn, to a few per worker.
	replayChunksPerWorker = 4
)

// replayChunk is a run of consecutive records of one segment, and the
// memory they are decoded into. Once fn has seen them the chunk goes back
// to the pipeline's free list for a later run: allocating and collecting a
// block per record was half the cost of decoding.
type replayChunk struct {
	path    string
	buf     *segmentBuffer // the segment entries are in; released once decoded
	first   uint64         // seq of entries[0]
	entries [][]byte       // frames
	offs    []int          // byte offset of each entry in the segment
	blocks  []record.Block
	strs    record.Strings  // the records' strings; new for each use, since fn keeps them
	recs    []*core.Record  // decoded, in order; up to the first error
	preps   []core.Prepared // by record, when the replay prepares records
	err     error           // the first decode or read error: replay stops after recs
	done    chan struct{}   // receives once when the chunk is decoded
}

// replayPipeline is one replay's producer, workers and queues. The
// producer and the workers exit when the producer has queued every chunk
// or the caller has closed quit; stop waits for them.
type replayPipeline struct {
	work  chan *replayChunk   // producer to workers
	order chan *replayChunk   // producer to the caller, in seq order; closed after the last
	free  chan *replayChunk   // chunks fn is done with, for reuse
	bufs  chan *segmentBuffer // segment buffers no chunk needs any more, for reuse
	quit  chan struct{}       // closed by the caller when it stops early
	wg    sync.WaitGroup

	prepared bool         // whether the workers prepare records
	cur      *replayChunk // being filled by the producer
	warmed   byte         // what scanSegment's lineWarmers loaded, so that the loads stay
}

// startReplayPipeline starts the workers and the producer, which calls
// produce with itself and, when produce returns an error, queues it after
// the records before it. Each worker calls newPrepare, when not nil, for
// the function it calls on each record it decodes.
func startReplayPipeline(newPrepare func() func(*core.Record, *core.Prepared), produce func(p *replayPipeline) error) *replayPipeline {
	workers := runtime.GOMAXPROCS(0)
	maxIn := workers * replayChunksPerWorker
	p := &replayPipeline{
		work:  make(chan *replayChunk, maxIn),
		order: make(chan *replayChunk, maxIn),
		free:  make(chan *replayChunk, maxIn+2),
		bufs:  make(chan *segmentBuffer, replaySegmentBuffers),
		quit:  make(chan struct{}),

		prepared: newPrepare != nil,
	}
	var workersDone sync.WaitGroup
	for range workers {
		workersDone.Go(func() {
			var prepare func(*core.Record, *core.Prepared)
			if newPrepare != nil {
				prepare = newPrepare()
			}
			for c := range p.work {
				c.decode(prepare)
			}
		})
	}
	p.wg.Go(func() {
		defer workersDone.Wait()
		defer close(p.work)
		defer close(p.order)
		err := produce(p)
		if errors.Is(err, errReplayStopped) || errors.Is(p.submit(), errReplayStopped) {
			return
		}
		if err != nil {
			// The records before the damage are replayed first, as if
			// read one by one; an error of theirs comes first.
			c := p.chunk("", nil, 0)
			c.err = err
			c.done <- struct{}{}
			p.send(c)
		}
	})
	return p
}

// errReplayStopped tells the producer that the caller has stopped.
var errReplayStopped = errors.New("wal: replay stopped")

// chunk returns an empty chunk of the segment in buf (nil: none), reused
// when one is free.
func (p *replayPipeline) chunk(path string, buf *segmentBuffer, first uint64) *replayChunk {
	var c *replayChunk
	select {
	case c = <-p.free:
		c.entries, c.offs, c.recs, c.err = c.entries[:0], c.offs[:0], c.recs[:0], nil
		c.strs = record.Strings{}
	default:
		c = &replayChunk{
			entries: make([][]byte, 0, replayChunkRecords),
			offs:    make([]int, 0, replayChunkRecords),
			done:    make(chan struct{}, 1),
		}
	}
	c.path, c.first, c.buf = path, first, buf
	if buf != nil {
		buf.refs.Add(1)
	}
	return c
}

// add queues one entry, submitting the chunk when it is full. It runs on
// the producer; its only error is errReplayStopped.
func (p *replayPipeline) add(sd *segmentData, off int, seq uint64, entry []byte) error {
	if p.cur == nil {
		p.cur = p.chunk(sd.path, sd.buf, seq)
	}
	p.cur.entries = append(p.cur.entries, entry)
	p.cur.offs = append(p.cur.offs, off)
	if len(p.cur.entries) == replayChunkRecords {
		return p.submit()
	}
	return nil
}

// submit hands the chunk being filled to the workers and queues it for the
// caller. A chunk ends at a segment's end, so that it names one file.
func (p *replayPipeline) submit() error {
	c := p.cur
	if c == nil {
		return nil
	}
	p.cur = nil
	p.work <- c // a worker takes it soon: workers never block
	if !p.send(c) {
		return errReplayStopped
	}
	return nil
}

// send queues c for the caller; false when the caller has stopped.
func (p *replayPipeline) send(c *replayChunk) bool {
	select {
	case p.order <- c:
		return true
	case <-p.quit:
		return false
	}
}

// decode runs on a worker.
func (c *replayChunk) decode(prepare func(*core.Record, *core.Prepared)) {
	defer func() { c.done <- struct{}{} }()
	if cap(c.blocks) < len(c.entries) {
		c.blocks = make([]record.Block, len(c.entries))
	}
	c.blocks = c.blocks[:len(c.entries)]
	if prepare != nil && len(c.preps) < len(c.entries) {
		c.preps = append(c.preps, make([]core.Prepared, len(c.entries)-len(c.preps))...)
	}
	for i, e := range c.entries {
		seq := c.first + uint64(i)
		// DecodeFramed wants a zero block. Cleared here, each just before
		// its decode, rather than all of them first: the block's cache lines
		// are then still in the first-level cache when the decode writes
		// them (the chunk's 256 blocks are 240 KiB).
		c.blocks[i] = record.Block{}
		rec, err := record.DecodeFramedStrings(e, seq, &c.blocks[i], &c.strs)
		if err != nil {
			c.err = fmt.Errorf("wal: replay: %s: byte %d: seq %d: %w", c.path, c.offs[i], seq, err)
			return
		}
		if prepare != nil {
			prepare(rec, &c.preps[i])
		}
		c.recs = append(c.recs, rec)
	}
}

// deliver calls fn on every record in order, on the caller's goroutine,
// and returns the first error: fn's, or a read or decode error after the
// records before it. It stops the producer and waits for it either way.
func (p *replayPipeline) deliver(fn func(uint64, *core.Record, *core.Prepared) error) error {
	defer p.wg.Wait()
	defer close(p.quit)
	for c := range p.order {
		<-c.done
		if c.buf != nil {
			c.buf.release(p) // the records hold copies of what they keep
			c.buf = nil
		}
		for i, rec := range c.recs {
			seq := c.first + uint64(i)
			var prep *core.Prepared
			if p.prepared {
				prep = &c.preps[i]
			}
			if err := fn(seq, rec, prep); err != nil {
				return fmt.Errorf("wal: replay: seq %d: %w", seq, err)
			}
		}
		if c.err != nil {
			return c.err
		}
		select {
		case p.free <- c:
		default:
		}
	}
	return nil
}

// replaySegmentBuffers is how many segment buffers a replay keeps for
// reuse: the segment being read ahead, the one being split, and the one
// the oldest chunks in flight are in.
const replaySegmentBuffers = 3

// segmentBuffer holds a segment's bytes while chunks of it are decoded.
// refs counts the producer splitting it and each chunk of it not decoded
// yet; the last to let go hands it back for the next segment to be read
// into. A buffer whose content is reused after being handed back would
// corrupt records silently: the chunk releases it only once decoded.
type segmentBuffer struct {
	data []byte
	refs atomic.Int32
}

// buffer returns a segment buffer held once, for the producer.
func (p *replayPipeline) buffer() *segmentBuffer {
	var b *segmentBuffer
	select {
	case b = <-p.bufs:
	default:
		b = &segmentBuffer{}
	}
	b.refs.Store(1)
	return b
}

// release lets go of one hold on b, handing it back to p when it was the
// last.
func (b *segmentBuffer) release(p *replayPipeline) {
	if n := b.refs.Add(-1); n > 0 {
		return
	} else if n < 0 {
		panic(fmt.Sprintf("BUG: wal: replay: segment buffer released %d times too often", -n))
	}
	select {
	case p.bufs <- b:
	default:
	}
}

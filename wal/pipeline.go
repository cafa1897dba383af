package wal

import (
	"fmt"
	"runtime"
	"sync"

	"marketd/core"
	"marketd/wal/record"
)

// Replay decodes on every core. Decoding is most of its cost (about 1 us
// for a trade record on the 2-vCPU machine here, half of it allocating the
// record), and during recovery it runs beside fn applying the records.
// Workers decode chunks of consecutive records; the caller's goroutine
// splits the segments into chunks and calls fn in seq order as chunks come
// back, so fn runs on one goroutine, in order, as in a sequential replay.
const (
	// replayChunkRecords is the size of one worker's unit: large enough to
	// make the hand-over cost negligible, small enough to keep all workers
	// busy on a short log.
	replayChunkRecords = 256
	// replayChunksPerWorker bounds the chunks in flight, and so the decoded
	// records waiting for fn, to a few per worker.
	replayChunksPerWorker = 3
)

// replayChunk is a run of consecutive records of one segment.
type replayChunk struct {
	path    string
	first   uint64   // seq of entries[0]
	entries [][]byte // frames
	offs    []int    // byte offset of each entry in the segment
	mem     *chunkMemory
	err     error         // the first decode error; mem.recs holds the records before it
	done    chan struct{} // closed when decoded
}

// chunkMemory is the decoded records of a chunk. Once fn has seen them it
// goes back to the pipeline's pool for a later chunk: allocating and
// collecting a block per record was half the cost of decoding.
type chunkMemory struct {
	blocks []record.Block
	recs   []*core.Record
}

// replayPipeline hands chunks to the decoding workers and delivers their
// records to fn in order. It is used by one goroutine, the caller of
// Replay; the workers only see the chunks sent to them and exit when stop
// closes their channel.
type replayPipeline struct {
	fn       func(uint64, *core.Record) error
	mems     sync.Pool // *chunkMemory
	work     chan *replayChunk
	wg       sync.WaitGroup
	inFlight []*replayChunk // submitted, oldest first
	maxIn    int
	cur      *replayChunk // being filled
	err      error        // the first error of fn or of decoding: replay stops there
}

func newReplayPipeline(fn func(uint64, *core.Record) error) *replayPipeline {
	workers := runtime.GOMAXPROCS(0)
	p := &replayPipeline{
		fn:    fn,
		work:  make(chan *replayChunk, workers*replayChunksPerWorker),
		maxIn: workers * replayChunksPerWorker,
	}
	for range workers {
		p.wg.Go(func() {
			for c := range p.work {
				c.decode(&p.mems)
			}
		})
	}
	return p
}

// decode runs on a worker.
func (c *replayChunk) decode(mems *sync.Pool) {
	defer close(c.done)
	m, _ := mems.Get().(*chunkMemory)
	if m == nil {
		m = &chunkMemory{}
	}
	if cap(m.blocks) < len(c.entries) {
		m.blocks = make([]record.Block, len(c.entries))
	}
	m.blocks = m.blocks[:len(c.entries)]
	clear(m.blocks) // decodeRecordInto wants zero blocks
	m.recs = m.recs[:0]
	c.mem = m
	for i, e := range c.entries {
		seq := c.first + uint64(i)
		rec, err := record.DecodeFramed(e, seq, &m.blocks[i])
		if err != nil {
			c.err = fmt.Errorf("wal: replay: %s: byte %d: seq %d: %w", c.path, c.offs[i], seq, err)
			return
		}
		m.recs = append(m.recs, rec)
	}
}

// add queues one entry, submitting the chunk when it is full. An error is
// fn's or a decode error of an earlier chunk: replay stops there.
func (p *replayPipeline) add(path string, off int, seq uint64, entry []byte) error {
	if p.err != nil {
		return p.err
	}
	if p.cur == nil {
		p.cur = &replayChunk{
			path:    path,
			first:   seq,
			entries: make([][]byte, 0, replayChunkRecords),
			offs:    make([]int, 0, replayChunkRecords),
			done:    make(chan struct{}),
		}
	}
	p.cur.entries = append(p.cur.entries, entry)
	p.cur.offs = append(p.cur.offs, off)
	if len(p.cur.entries) == replayChunkRecords {
		return p.submit()
	}
	return nil
}

// submit sends the chunk being filled to the workers, first delivering the
// oldest chunk when the pipeline is full. A chunk ends at a segment's end,
// so that it names one file.
func (p *replayPipeline) submit() error {
	if p.err != nil || p.cur == nil {
		return p.err
	}
	for len(p.inFlight) >= p.maxIn {
		if err := p.deliverOldest(); err != nil {
			return err
		}
	}
	p.inFlight = append(p.inFlight, p.cur)
	p.work <- p.cur // never blocks: the channel holds maxIn chunks
	p.cur = nil
	return nil
}

// deliverOldest waits for the oldest chunk and calls fn on its records. Its
// first error sticks: fn is never called again.
func (p *replayPipeline) deliverOldest() error {
	c := p.inFlight[0]
	p.inFlight[0] = nil
	p.inFlight = p.inFlight[1:]
	<-c.done
	for i, rec := range c.mem.recs {
		seq := c.first + uint64(i)
		if err := p.fn(seq, rec); err != nil {
			p.err = fmt.Errorf("wal: replay: seq %d: %w", seq, err)
			return p.err
		}
	}
	p.mems.Put(c.mem)
	p.err = c.err
	return p.err
}

// flush submits what is queued and delivers every chunk in flight.
func (p *replayPipeline) flush() error {
	if err := p.submit(); err != nil {
		return err
	}
	for len(p.inFlight) > 0 {
		if err := p.deliverOldest(); err != nil {
			return err
		}
	}
	return nil
}

// stop ends the workers and waits for them. Chunks still in flight are
// decoded and dropped.
func (p *replayPipeline) stop() {
	close(p.work)
	p.wg.Wait()
}

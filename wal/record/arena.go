package record

import (
	"fmt"

	"marketd/core"
)

// Arena is memory that records of many account changes decode into and
// that serves the next such record once the caller is done with the last:
// a snapshot's chunk of 4,096 accounts decoded into about 3 MB of new
// memory (the account changes, a block of single items and an
// AccountInfo each) that the state copies and drops, 800 MB for 1,000,000
// accounts, each page of it faulted in from the kernel
// (docs/PERFORMANCE.md, "Time to ready"). The zero Arena is ready; an
// Arena serves one record at a time.
type Arena struct {
	blk      Block
	accounts []core.AccountChange
	blocks   []accountBlock
	infos    []core.AccountInfo
}

// DecodeArena is DecodeVersion into a's memory. The record, its account
// changes, their AccountInfos and their lists of one item live there until
// the next DecodeArena with a: the caller must be done with all of them by
// then. Strings, byte slices and lists of more items are the caller's to
// keep, as with DecodeVersion.
func DecodeArena(a *Arena, version byte, b []byte) (*core.Record, error) {
	if version < MinFormatVersion || version > FormatVersion {
		return nil, fmt.Errorf("record: decode record: unknown version %d: %w", version, ErrCorrupt)
	}
	a.blk = Block{}
	return decodeInto(&a.blk, version, b, nil, a)
}

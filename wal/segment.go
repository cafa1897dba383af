package wal

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"marketd/internal/vfs"
)

// Tidwall's on-disk layout, which repair and replay read directly: a
// directory of segment files, each named by the index of its first entry as
// 20 decimal digits, each a sequence of entries uvarint(len(data)) + data.
// A truncation in progress leaves a NAME.START (TruncateFront) or NAME.END
// (TruncateBack) file that tidwall's Open finishes. Other names (our
// NAME.broken copies, tidwall's NAME.TEMP leftovers) are ignored by tidwall
// and by us.
const (
	segmentNameLen = 20
	startSuffix    = ".START"
	endSuffix      = ".END"
)

// segmentFile is one segment file of the log directory.
type segmentFile struct {
	name  string // file name in the log directory
	index uint64 // index of its first entry
}

// listSegments returns the segment files that tidwall's Open will use, in
// index order, exactly as its load function chooses them: an interrupted
// TruncateFront (.START file) drops every segment before it, an interrupted
// TruncateBack (.END file) every segment after it. Tidwall renames those
// files when it opens the log; listSegments only reads the directory, so
// that repair can scan the file tidwall will take as its last segment.
func listSegments(fsys vfs.FS, dir string) ([]segmentFile, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var segs []segmentFile
	startIdx, endIdx := -1, -1
	for _, ent := range ents {
		name := ent.Name()
		if ent.IsDir() || len(name) < segmentNameLen {
			continue
		}
		index, err := strconv.ParseUint(name[:segmentNameLen], 10, 64)
		if err != nil || index == 0 {
			continue
		}
		isStart := len(name) == segmentNameLen+len(startSuffix) && strings.HasSuffix(name, startSuffix)
		isEnd := len(name) == segmentNameLen+len(endSuffix) && strings.HasSuffix(name, endSuffix)
		if len(name) != segmentNameLen && !isStart && !isEnd {
			continue
		}
		if isStart {
			startIdx = len(segs)
		} else if isEnd && endIdx == -1 {
			endIdx = len(segs)
		}
		segs = append(segs, segmentFile{name: name, index: index})
	}
	if startIdx != -1 {
		if endIdx != -1 {
			return nil, fmt.Errorf("wal: %s: both a %s and an %s file: %w", dir, startSuffix, endSuffix, ErrCorrupt)
		}
		segs = segs[startIdx:]
	}
	if endIdx != -1 {
		segs = segs[:endIdx+1]
		if n := len(segs); n > 1 && segs[n-2].index == segs[n-1].index {
			segs[n-2] = segs[n-1]
			segs = segs[:n-1]
		}
	}
	return segs, nil
}

// nextEntry splits the tidwall entry at the start of b into its data and
// its total size n. It returns n == 0 when b does not start with a whole
// entry. It parses lengths as tidwall does (binary.Uvarint), so that the
// entries it finds are the ones tidwall finds.
func nextEntry(b []byte) (data []byte, n int) {
	size, k := binary.Uvarint(b)
	if k <= 0 || size > uint64(len(b)-k) {
		return nil, 0
	}
	return b[k : k+int(size)], k + int(size)
}

package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"marketd/core"
)

// Frame layout, the data of one tidwall entry (tidwall adds only a uvarint
// length in front):
//
//	offset  size  field
//	0       2     magic 0xF9 0xC1
//	2       1     format version (FormatVersion)
//	3       1     kind: the core.Kind of the record in the payload
//	4       8     seq, little-endian: the tidwall index the frame is stored at
//	12      n     payload: a record encoded by Append
//	12+n    4     CRC-32C (Castagnoli), little-endian, of bytes [0, 12+n)
//
// These values are written to disk and never change meaning.
const (
	// FormatVersion is the version of the frame and record encoding this
	// package writes. Version 3 appended fields at the end of the
	// structures it extends; a version-2 frame decodes as a record
	// without them.
	FormatVersion = 3
	// MinFormatVersion is the oldest version this package reads.
	MinFormatVersion = 2
	// FrameHeaderBytes is the size of the frame header before the payload.
	FrameHeaderBytes = 12
	// FrameTrailerBytes is the size of the CRC after the payload.
	FrameTrailerBytes = 4
	// MinFrameBytes is the size of a frame with an empty payload; anything
	// shorter is rejected, which also rejects the empty entries that
	// tidwall parses out of zero-filled bytes at the end of a segment.
	MinFrameBytes = FrameHeaderBytes + FrameTrailerBytes
	// MaxFrameBytes is the size of a frame holding the largest record.
	MaxFrameBytes = MinFrameBytes + MaxBytes
)

// FrameMagic0 and FrameMagic1 open every frame. Neither byte can occur in
// valid UTF-8, so a frame embedded in a user's string cannot be taken for a
// real one when repair looks for valid frames after a damaged one.
const (
	FrameMagic0 = 0xF9
	FrameMagic1 = 0xC1
)

// castagnoli is crc32's Castagnoli table, looked up once: MakeTable goes
// through a sync.Once on every call, about 45 instructions, which was a
// seventh of a trade record's CRC (cachegrind, core's
// BenchmarkTradeFsyncOff; docs/PERFORMANCE.md, "The log's bytes on the
// writer").
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c returns the CRC-32C (Castagnoli) of b; crc32 computes it with the
// SSE4.2 CRC32 instruction where there is one.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Frame is a decoded frame. Payload aliases the bytes it was decoded from.
type Frame struct {
	Version byte // from MinFormatVersion to FormatVersion
	Kind    core.Kind
	Seq     uint64
	Payload []byte
}

// AppendFrame appends a frame holding payload to dst and returns the
// extended slice.
func AppendFrame(dst []byte, kind core.Kind, seq uint64, payload []byte) []byte {
	start := len(dst)
	dst = appendFrameHeader(dst, kind, seq)
	dst = append(dst, payload...)
	return sealFrame(dst, start)
}

// AppendFramed appends a frame holding the encoding of rec at seq to
// dst, encoding the record in place rather than through a separate buffer.
// Like Append it panics on a record that could not be read back.
func AppendFramed(dst []byte, seq uint64, rec *core.Record) []byte {
	start := len(dst)
	dst = appendFrameHeader(dst, rec.Kind, seq)
	dst = Append(dst, rec)
	return sealFrame(dst, start)
}

func appendFrameHeader(dst []byte, kind core.Kind, seq uint64) []byte {
	dst = append(dst, FrameMagic0, FrameMagic1, FormatVersion, byte(kind))
	return binary.LittleEndian.AppendUint64(dst, seq)
}

// sealFrame appends the CRC of the frame that starts at dst[start].
func sealFrame(dst []byte, start int) []byte {
	sum := crc32c(dst[start:])
	return binary.LittleEndian.AppendUint32(dst, sum)
}

// DecodeFrame checks and splits one frame; b must hold exactly the frame.
// It rejects, with an error wrapping ErrCorrupt, a frame shorter than
// MinFrameBytes or longer than MaxFrameBytes, a bad magic, a CRC mismatch
// and a version outside MinFormatVersion..FormatVersion. The caller checks Seq against where the frame was read
// (DecodeFrameAt does both).
func DecodeFrame(b []byte) (Frame, error) {
	if len(b) < MinFrameBytes {
		return Frame{}, fmt.Errorf("record: decode frame: %d bytes, minimum %d: %w", len(b), MinFrameBytes, ErrCorrupt)
	}
	if len(b) > MaxFrameBytes {
		return Frame{}, fmt.Errorf("record: decode frame: %d bytes, limit %d: %w", len(b), MaxFrameBytes, ErrCorrupt)
	}
	if b[0] != FrameMagic0 || b[1] != FrameMagic1 {
		return Frame{}, fmt.Errorf("record: decode frame: bad magic %#x %#x: %w", b[0], b[1], ErrCorrupt)
	}
	end := len(b) - FrameTrailerBytes
	want := binary.LittleEndian.Uint32(b[end:])
	if got := crc32c(b[:end]); got != want {
		return Frame{}, fmt.Errorf("record: decode frame: crc %#08x, want %#08x: %w", got, want, ErrCorrupt)
	}
	if b[2] < MinFormatVersion || b[2] > FormatVersion {
		return Frame{}, fmt.Errorf("record: decode frame: unknown version %d: %w", b[2], ErrCorrupt)
	}
	return Frame{
		Version: b[2],
		Kind:    core.Kind(b[3]),
		Seq:     binary.LittleEndian.Uint64(b[4:]),
		Payload: b[FrameHeaderBytes:end:end],
	}, nil
}

// FrameIntact reports whether b is a frame written whole, whatever its
// version and seq: the magic is there and the CRC matches. Repair never cuts
// such a frame, nor anything before one.
func FrameIntact(b []byte) bool {
	if len(b) < MinFrameBytes || len(b) > MaxFrameBytes || b[0] != FrameMagic0 || b[1] != FrameMagic1 {
		return false
	}
	end := len(b) - FrameTrailerBytes
	return crc32c(b[:end]) == binary.LittleEndian.Uint32(b[end:])
}

// DecodeFrameAt is DecodeFrame for a frame read at index seq: it also
// rejects a frame whose Seq is not seq, which catches entries that are
// whole and valid but misplaced.
func DecodeFrameAt(b []byte, seq uint64) (Frame, error) {
	f, err := DecodeFrame(b)
	if err != nil {
		return Frame{}, err
	}
	if f.Seq != seq {
		return Frame{}, fmt.Errorf("record: decode frame: seq %d read at %d: %w", f.Seq, seq, ErrCorrupt)
	}
	return f, nil
}

// DecodeFramed decodes the record of a frame read at seq into blk, which
// must be zero, and checks that the frame's kind is the record's: the
// decoding of a frame written by AppendFramed. Replay hands in Blocks
// allocated a chunk at a time.
func DecodeFramed(b []byte, seq uint64, blk *Block) (*core.Record, error) {
	return DecodeFramedStrings(b, seq, blk, nil)
}

// DecodeFramedStrings is DecodeFramed with the record's strings copied
// into strs (nil: an allocation each), as replay decodes a chunk of
// records.
func DecodeFramedStrings(b []byte, seq uint64, blk *Block, strs *Strings) (*core.Record, error) {
	f, err := DecodeFrameAt(b, seq)
	if err != nil {
		return nil, err
	}
	rec, err := decodeInto(blk, f.Version, f.Payload, strs, nil)
	if err != nil {
		return nil, err
	}
	if rec.Kind != f.Kind {
		return nil, fmt.Errorf("record: decode frame: kind %d holds a record of kind %d: %w", f.Kind, rec.Kind, ErrCorrupt)
	}
	return rec, nil
}

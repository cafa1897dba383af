package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"marketd/core"
	"marketd/wal/record"
)

// Layout constants; see the package comment.
const (
	headerBytes  = 24
	trailerBytes = 1 + 8 + 8 + 4
	// MaxChunkBytes bounds one chunk's frame, as a record is bounded.
	MaxChunkBytes = record.MaxFrameBytes
)

// magic opens a snapshot of the current format; magicV2 one of format 2,
// whose chunks are frames of record format 2, still read.
var (
	magic   = [8]byte{'M', 'K', 'T', 'S', 'N', 'A', 'P', '3'}
	magicV2 = [8]byte{'M', 'K', 'T', 'S', 'N', 'A', 'P', '2'}
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt reports a snapshot file that is damaged or not a snapshot.
var ErrCorrupt = errors.New("snapshot: corrupt")

// Header is what a snapshot says about itself.
type Header struct {
	// From is the log position durable when the capture began: replay
	// starts after it.
	From uint64
	// Through is the highest LSN of any object in the snapshot: the log
	// must reach it for the snapshot to be usable.
	Through   uint64
	CreatedAt time.Time
	Chunks    uint64
}

func appendHeader(dst []byte, from uint64, created time.Time) []byte {
	dst = append(dst, magic[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, from)
	return binary.LittleEndian.AppendUint64(dst, uint64(created.UnixNano()))
}

func appendChunk(dst []byte, n uint64, rec *core.Record) []byte {
	// Reserve room for the length, encode, then move it in place: the
	// frame's length is known only once it is encoded.
	start := len(dst)
	dst = append(dst, make([]byte, binary.MaxVarintLen64)...)
	dst = record.AppendFramed(dst, n, rec)
	frameLen := len(dst) - start - binary.MaxVarintLen64
	var lenBuf [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lenBuf[:], uint64(frameLen))
	copy(dst[start+k:], dst[start+binary.MaxVarintLen64:])
	copy(dst[start:], lenBuf[:k])
	return dst[:start+k+frameLen]
}

func appendTrailer(dst []byte, through, chunks uint64, crc uint32) []byte {
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint64(dst, through)
	dst = binary.LittleEndian.AppendUint64(dst, chunks)
	return binary.LittleEndian.AppendUint32(dst, crc)
}

// Decode checks a whole snapshot file and calls fn with each of its image
// records in order, on the caller's goroutine. It verifies the file's CRC
// before decoding anything, then every chunk's frame and record, the chunk
// count and that nothing trails; any failure wraps ErrCorrupt. An error
// from fn is returned wrapped; fn is not called after it, nor for a chunk
// after a damaged one.
func Decode(b []byte, fn func(*core.Record) error) (Header, error) {
	return decode(b, nil, fn, nil)
}

// decode is Decode, first calling reserve, when not nil, with the number
// of account changes the chunks declare, before fn sees any record; with ar
// not nil, into ar's memory (decodeChunks).
func decode(b []byte, reserve func(accounts int), fn func(*core.Record) error, ar *arenas) (Header, error) {
	h, chunks, err := splitChunks(b)
	if err != nil {
		return Header{}, err
	}
	if reserve != nil {
		n := 0
		for _, c := range chunks {
			n += c.accounts
		}
		reserve(n)
	}
	if err := decodeChunks(chunks, fn, ar); err != nil {
		return Header{}, err
	}
	return h, nil
}

// chunkFrame is one chunk's checked frame, not decoded yet.
type chunkFrame struct {
	n        uint64 // chunk number, from 1
	version  byte
	payload  []byte
	accounts int // account changes its record declares
}

// splitChunks checks the file's magic, CRC, chunk lengths, chunk frames,
// count and end, and returns the header and the chunks' frames in order.
func splitChunks(b []byte) (Header, []chunkFrame, error) {
	if len(b) < headerBytes+trailerBytes || !bytes.Equal(b[:8], magic[:]) && !bytes.Equal(b[:8], magicV2[:]) {
		return Header{}, nil, fmt.Errorf("%w: not a snapshot (%d bytes)", ErrCorrupt, len(b))
	}
	// A snapshot's chunks are frames of the record format of its magic.
	version := byte(record.FormatVersion)
	if bytes.Equal(b[:8], magicV2[:]) {
		version = 2
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return Header{}, nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	h := Header{
		From:      binary.LittleEndian.Uint64(b[8:16]),
		CreatedAt: time.Unix(0, int64(binary.LittleEndian.Uint64(b[16:24]))).UTC(),
		Through:   binary.LittleEndian.Uint64(b[len(b)-20 : len(b)-12]),
		Chunks:    binary.LittleEndian.Uint64(b[len(b)-12 : len(b)-4]),
	}
	rest := b[headerBytes : len(b)-trailerBytes+1] // keep the terminating zero
	var chunks []chunkFrame
	for n := uint64(1); ; n++ {
		size, k := binary.Uvarint(rest)
		if k <= 0 {
			return Header{}, nil, fmt.Errorf("%w: chunk %d: bad length", ErrCorrupt, n)
		}
		rest = rest[k:]
		if size == 0 {
			break
		}
		if size > uint64(len(rest)) || size > MaxChunkBytes {
			return Header{}, nil, fmt.Errorf("%w: chunk %d: length %d past the end", ErrCorrupt, n, size)
		}
		fr, err := record.DecodeFrameAt(rest[:size], n)
		if err != nil {
			return Header{}, nil, fmt.Errorf("%w: chunk %d: %w", ErrCorrupt, n, err)
		}
		if fr.Version != version {
			return Header{}, nil, fmt.Errorf("%w: chunk %d: record format %d in a snapshot of format %d", ErrCorrupt, n, fr.Version, version)
		}
		if fr.Kind != core.KindImage {
			return Header{}, nil, fmt.Errorf("%w: chunk %d: kind %d is not an image", ErrCorrupt, n, fr.Kind)
		}
		accounts, err := record.CountAccounts(fr.Version, fr.Payload)
		if err != nil {
			return Header{}, nil, fmt.Errorf("%w: chunk %d: %w", ErrCorrupt, n, err)
		}
		chunks = append(chunks, chunkFrame{n: n, version: fr.Version, payload: fr.Payload, accounts: accounts})
		rest = rest[size:]
	}
	if len(rest) != 0 || uint64(len(chunks)) != h.Chunks {
		return Header{}, nil, fmt.Errorf("%w: %d chunks, trailer says %d, %d bytes left", ErrCorrupt, len(chunks), h.Chunks, len(rest))
	}
	return h, chunks, nil
}

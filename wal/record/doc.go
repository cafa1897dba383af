// Package record is marketd's on-disk schema: the binary encoding of a
// core.Record (Append, Decode), the frame that wraps one with its kind, seq
// and a CRC-32C (AppendFrame, AppendFramed, DecodeFrame, DecodeFrameAt,
// DecodeFramed), and the limits both sides enforce (MaxBytes,
// MaxStringBytes, MaxListItems, MaxFrameBytes). The log (package wal)
// stores one frame per tidwall entry; package snapshot stores frames of
// image records in its files. Neither format may change meaning: a data
// directory written by an earlier build must still decode, or be refused
// with ErrCorrupt naming what is wrong.
//
// Files: encode.go (limits, enum checks, Append and the encoders of the core
// parts), extras.go (encoders and decoders of the account's and market's
// extra lists: profile, notes, vig payments, transfers, proposals and
// votes), decode.go (Decode and the decoders of the core parts, the
// allocation Block), decoder.go (the byte reader: varints, counts checked
// against the bytes left, strings), frame.go (the frame layout), errors.go.
//
// The encoding is canonical: Decode accepts exactly one encoding of each
// record and Append produces it; the fuzz targets check both directions.
// Package recordgen makes the random records of the property tests.
package record

package record

import "errors"

// ErrCorrupt reports bytes that are not a valid frame or record: a bad
// magic, CRC, version, length, seq, kind or field. wal.ErrCorrupt is the
// same value, so one errors.Is matches damage found by either package.
var ErrCorrupt = errors.New("wal: corrupt")

package baseline

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"marketd/core/money"
)

// LeastSetupFile is the file, in the directory of the fsync-only file,
// in which marketd-load hands the least-trade handler of a baseline
// process its keys and markets (LeastSetup.WriteFile).
const LeastSetupFile = "least-trade-setup"

// MaxRecordBytes bounds LeastSetup.RecordBytes.
const MaxRecordBytes = 64 << 10

// LeastSetup is what the least-trade handler serves: the API keys, each of
// an account of its own with Balance to trade with, and the markets, each
// at marketd's defaults (core.DefaultAlpha, core.DefaultLiquidityUnit).
type LeastSetup struct {
	// KeyHashes are the SHA-256 of the keys' literals (svc_live_ and 32
	// hex digits): only the hash is stored (docs/API.md, "Authentication").
	KeyHashes [][32]byte
	Markets   []uuid.UUID
	Balance   money.Amount
	// RecordBytes, when larger than a trade's record, pads each record to
	// it: a run that compares the least record with a larger one (the
	// fsync-only handler's RecordBytes, marketd's frame) writes as many
	// bytes per trade as the other.
	RecordBytes int
}

// AddKey adds the key whose literal is key (svc_live_...).
func (s *LeastSetup) AddKey(key string) {
	s.KeyHashes = append(s.KeyHashes, sha256.Sum256([]byte(key)))
}

// WriteFile writes s to path, one line per key hash and per market and a
// line of the balance: no key itself.
func (s *LeastSetup) WriteFile(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "balance %d\nrecord-bytes %d\n", s.Balance, s.RecordBytes)
	for _, h := range s.KeyHashes {
		fmt.Fprintf(&b, "key %x\n", h)
	}
	for _, m := range s.Markets {
		fmt.Fprintf(&b, "market %s\n", m)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("baseline: write the least-trade setup: %w", err)
	}
	return nil
}

// ReadLeastSetup reads what WriteFile wrote to path; a missing file is an
// empty setup (no key, no market: every trade request gets 401).
func ReadLeastSetup(path string) (LeastSetup, error) {
	var s LeastSetup
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("baseline: open the least-trade setup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		kind, value, _ := strings.Cut(sc.Text(), " ")
		var err error
		switch kind {
		case "balance":
			var v int64
			v, err = strconv.ParseInt(value, 10, 64)
			s.Balance = money.Amount(v)
		case "record-bytes":
			s.RecordBytes, err = strconv.Atoi(value)
			if err == nil && (s.RecordBytes < 0 || s.RecordBytes > MaxRecordBytes) {
				err = fmt.Errorf("out of range 0-%d", MaxRecordBytes)
			}
		case "key":
			var h [32]byte
			var raw []byte
			if raw, err = hex.DecodeString(value); err == nil && len(raw) != len(h) {
				err = fmt.Errorf("%d bytes, want %d", len(raw), len(h))
			}
			copy(h[:], raw)
			s.KeyHashes = append(s.KeyHashes, h)
		case "market":
			var id uuid.UUID
			id, err = uuid.Parse(value)
			s.Markets = append(s.Markets, id)
		default:
			err = errors.New("unknown line")
		}
		if err != nil {
			return s, fmt.Errorf("baseline: least-trade setup line %d %q: %w", n, sc.Text(), err)
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("baseline: read the least-trade setup: %w", err)
	}
	return s, nil
}

package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"marketd/core"
	"marketd/wal"
)

// errDumpDone stops the replay once the range is printed.
var errDumpDone = errors.New("dump done")

// dumpRecords prints the log's records from seq from through to (0: the
// end), one line per record and one per object it changes, with amounts, as
// etcd's dump tool does for its log. Secrets never appear: keys and
// sessions are stored only as hashes, and the dump leaves those out too.
func dumpRecords(dataDir string, from, to uint64, out, stderr io.Writer) int {
	log, err := wal.OpenReader(nil, filepath.Join(dataDir, "wal"))
	if err != nil {
		fmt.Fprintf(stderr, "marketd check: %v\n", err)
		return checkFailed
	}
	first, last := log.FirstSeq(), log.LastSeq()
	if to == 0 || to > last {
		to = last
	}
	if from < first || from > to {
		fmt.Fprintf(stderr, "marketd check: the log holds records %d..%d; asked for %d..%d\n", first, last, from, to)
		return checkFailed
	}
	err = log.Replay(from, func(seq uint64, rec *core.Record) error {
		if seq > to {
			return errDumpDone
		}
		return writeRecord(out, seq, rec)
	})
	if err != nil && !errors.Is(err, errDumpDone) {
		fmt.Fprintf(stderr, "marketd check: %v\n", err)
		return checkFailed
	}
	if t, ok := log.Torn(); ok && to == last {
		fmt.Fprintf(out, "torn tail after seq %d: %s byte %d, %d bytes (%s)\n", last, t.File, t.Offset, t.Bytes, t.Cause)
	}
	return checkOK
}

// writeRecord prints one record.
func writeRecord(w io.Writer, seq uint64, rec *core.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "seq %d %s at %s\n", seq, rec.Kind, time.Unix(0, rec.Time).UTC().Format(time.RFC3339Nano))
	for _, a := range rec.Accounts {
		fmt.Fprintf(&b, "  account %s", a.ID)
		if a.Info != nil {
			fmt.Fprintf(&b, " name %q role %s", a.Info.Name, a.Info.Role)
		}
		for _, bal := range a.Balances {
			fmt.Fprintf(&b, " balance %s %s", bal.Currency, bal.After)
		}
		b.WriteString("\n")
		for _, l := range a.Ledger {
			fmt.Fprintf(&b, "    ledger %s %s %s, balance after %s, ref %s\n", l.Type, l.Amount, l.Currency, l.BalanceAfter, l.Ref)
		}
		for _, t := range a.Trades {
			verb := "buy"
			if t.Sell {
				verb = "sell"
			}
			fmt.Fprintf(&b, "    trade %s %s %s %s shares in market %s, cost %s, vig %s\n", t.ID, verb, t.Shares, t.Side, t.Market, t.Cost, t.Vig)
		}
		for _, p := range a.Positions {
			fmt.Fprintf(&b, "    position market %s %s shares yes %s no %s closed %v\n", p.Market, p.Currency, p.Shares[core.Yes], p.Shares[core.No], p.Closed)
		}
		for _, t := range a.Transfers {
			fmt.Fprintf(&b, "    transfer %+v\n", t)
		}
	}
	for _, m := range rec.Markets {
		fmt.Fprintf(&b, "  market %s", m.ID)
		if m.Info != nil {
			fmt.Fprintf(&b, " %q status %s", m.Info.Title, m.Info.Status)
			if m.Info.Status == core.StatusResolved {
				fmt.Fprintf(&b, " outcome %s", m.Info.Outcome)
			}
		}
		b.WriteString("\n")
		for _, bk := range m.Books {
			fmt.Fprintf(&b, "    book %s q yes %s no %s, collateral %s, splits %s\n", bk.Currency, bk.Q[core.Yes], bk.Q[core.No], bk.Collateral, bk.Splits)
		}
		for _, p := range m.Proposals {
			fmt.Fprintf(&b, "    proposal %+v\n", p)
		}
		if len(m.Votes) > 0 {
			fmt.Fprintf(&b, "    votes %d\n", len(m.Votes))
		}
	}
	if s := rec.Supply; s != nil {
		fmt.Fprintf(&b, "  supply minted %v burned %v\n", s.Minted, s.Burned)
	}
	for _, k := range rec.Keys {
		fmt.Fprintf(&b, "  key %s account %s name %q prefix %s revoked %v\n", k.Key.ID, k.Key.Account, k.Key.Name, k.Key.Prefix, k.Key.RevokedAt != 0)
	}
	for _, s := range rec.Sessions {
		fmt.Fprintf(&b, "  session of account %s expires %s\n", s.Session.Account, time.Unix(0, s.Session.ExpiresAt).UTC().Format(time.RFC3339))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

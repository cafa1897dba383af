// Package drill runs marketd's kill -9 drill, as the marketd-drill tool
// does: it starts marketd as a child on a data directory, drives bots with
// trades, splits, merges, key creations and revocations, deposits and
// withdrawals, records every acknowledged operation with its answer and
// every one in flight, kills the child with SIGKILL at a random moment,
// runs the offline checker on the directory, restarts the child on it and
// verifies, through the API:
//
//   - every acknowledged operation is present with the same answer: its
//     ledger entry (trade id, split, merge, deposit or withdrawal id), the
//     amount and the balance after; an acknowledged key exists (and a
//     revoked one is revoked and refused with 401, an active one still
//     authenticates);
//   - nothing beyond the acknowledged and the in-flight operations was
//     applied: a bot's ledger is exactly its acknowledged entries followed
//     by, at most, those of its one operation in flight (at most one per
//     bot, since each bot waits for each answer); its keys are those it
//     created; its positions are what its applied operations give;
//   - every balance equals its ledger (the sum of the entries and the last
//     balance_after);
//   - in every market, the bots' yes shares less their no shares equal
//     q_yes - q_no;
//   - the time from the restart to ready.
//
// Conservation per currency and the other invariants of the state are
// those of the offline checker (`marketd check -data DIR`), run on the
// directory after each kill and after the final clean stop.
//
// An operation in flight at the kill is resolved at the next
// verification: applied when its entries (or its key) are there, not
// applied otherwise; either is allowed, and from then on it counts as
// acknowledged or as never made. A kill -9 keeps the page cache, so the
// drill cannot show a missing fsync; docs/RELIABILITY.md says which tests
// do.
package drill

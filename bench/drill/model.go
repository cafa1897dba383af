package drill

import (
	"github.com/google/uuid"

	"marketd/bench/client"
	"marketd/bench/load"
	"marketd/core/money"
	"marketd/internal/enum"
)

// kind is one kind of operation of the drill.
type kind uint8

const (
	opBuy kind = iota
	opSell
	opSplit
	opMerge
	opDeposit
	opWithdraw
	opKeyCreate
	opKeyRevoke
	numKinds
)

var kindNames = enum.New[kind]("kind", []string{opBuy: "buy", opSell: "sell", opSplit: "split", opMerge: "merge",
	opDeposit: "deposit", opWithdraw: "withdraw", opKeyCreate: "key-create", opKeyRevoke: "key-revoke"})

// String names the operation kind as the summary prints it.
func (k kind) String() string { return kindNames.Name(k) }

// weights are the kinds' relative frequencies: mostly trades, some of
// everything else.
var weights = [numKinds]int{opBuy: 30, opSell: 22, opSplit: 8, opMerge: 8, opDeposit: 8, opWithdraw: 8, opKeyCreate: 4, opKeyRevoke: 2}

// entry is a ledger entry the drill expects: its type, amount and balance
// after, and its ref_id when the answer named it (a split or a merge
// answer does not).
type entry struct {
	txType       string
	refID        uuid.UUID
	amount       money.Amount
	balanceAfter money.Amount
}

// op is one operation sent, with what its answer said.
type op struct {
	kind   kind
	market int
	side   int          // 0 yes, 1 no
	amount money.Amount // of a deposit or a withdrawal
	txHash string       // of a deposit
	keyRef int          // the bot's key created or revoked (index in keys)
	// keyName is the name of a key created: unique, so that a key in
	// flight can be found.
	keyName string
	// entry is the ledger entry of the answer (acknowledged ones only).
	entry entry
	usdc  bool
}

// key is an API key a bot created (acknowledged) or revoked.
type key struct {
	id           uuid.UUID
	name, secret string
	revoked      bool
}

// bot is one account of the drill and everything it was acknowledged.
type bot struct {
	*load.Bot
	wallet string
	// kp and usdc are the ledger entries expected, oldest first.
	kp, usdc []entry
	// shares[m] is the yes and no shares held of market m.
	shares [][2]money.Amount
	keys   []key
	// pending is the operation in flight at the last kill, nil when none.
	pending *op
	// keysCreated numbers the bot's key creations, for their names.
	keysCreated int
}

func (b *bot) balance(usdc bool) money.Amount {
	l := b.kp
	if usdc {
		l = b.usdc
	}
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1].balanceAfter
}

// activeKeys counts the bot's keys not revoked.
func (b *bot) activeKeys() int {
	n := 0
	for _, k := range b.keys {
		if !k.revoked {
			n++
		}
	}
	return n
}

// credentials returns the bot's first key, which is never revoked.
func (b *bot) credentials() client.Credentials { return client.Credentials{Key: b.Key.Key} }

// applyShares changes the bot's shares as an applied trade, split or
// merge of one share does.
func (b *bot) applyShares(o *op) {
	one := money.Units(1)
	held := &b.shares[o.market]
	switch o.kind {
	case opBuy:
		held[o.side] += one
	case opSell:
		held[o.side] -= one
	case opSplit:
		held[0] += one
		held[1] += one
	case opMerge:
		held[0] -= one
		held[1] -= one
	}
}

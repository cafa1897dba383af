package drill

import (
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/google/uuid"

	"marketd/bench/client"
	"marketd/core/money"
	"marketd/transport/wire"
)

// outcome is what became of one operation sent.
type outcome int

const (
	// acknowledged: answered 200; it must survive every crash.
	acknowledged outcome = iota
	// refused: answered 4xx; it must have changed nothing.
	refused
	// inFlight: no answer (the kill) or a 5xx: it may or may not have
	// been applied.
	inFlight
)

// maxActiveKeys keeps a bot's active keys under the server's limit of 10:
// beyond it the drill revokes instead of creating.
const maxActiveKeys = 6

// plan draws the bot's next operation, only among those its acknowledged
// state allows (a sell of a share held, a merge of a pair held, a
// withdrawal within the USDC balance, a revocation of a key other than
// the first).
func (b *bot) plan(r *rand.Rand, markets int) *op {
	total := 0
	for _, w := range weights {
		total += w
	}
	o := &op{market: r.IntN(markets), side: r.IntN(2)}
	n := r.IntN(total)
	for k, w := range weights {
		if n < w {
			o.kind = kind(k)
			break
		}
		n -= w
	}
	held := b.shares[o.market]
	switch o.kind {
	case opSell:
		if held[o.side] <= 0 {
			o.side = 1 - o.side
		}
		if held[o.side] <= 0 {
			o.kind = opBuy
		}
	case opMerge:
		if held[0] <= 0 || held[1] <= 0 {
			o.kind = opSplit
		}
	case opDeposit:
		o.usdc = true
		o.amount = money.Amount(r.Int64N(100*money.Scale) + 1)
		var h [32]byte
		_, _ = crand.Read(h[:])
		o.txHash = "0x" + hex.EncodeToString(h[:])
	case opWithdraw:
		o.usdc = true
		o.amount = money.Amount(r.Int64N(20*money.Scale) + 1)
		if o.amount > b.balance(true) {
			o.kind, o.amount = opBuy, 0
			o.usdc = false
		}
	case opKeyRevoke:
		var live []int
		for i, k := range b.keys {
			if !k.revoked && i > 0 {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			o.kind = opKeyCreate
		} else {
			o.keyRef = live[r.IntN(len(live))]
		}
	}
	if o.kind == opKeyCreate {
		if b.activeKeys() >= maxActiveKeys {
			o.kind = opBuy
		} else {
			b.keysCreated++
			o.keyName = fmt.Sprintf("drill-%d", b.keysCreated)
		}
	}
	return o
}

// do sends o for the bot and returns what became of it; an acknowledged
// operation is added to the bot's state.
func (b *bot) do(c *client.Client, markets []string, o *op) (outcome, error) {
	cr := b.credentials()
	var err error
	switch o.kind {
	case opBuy, opSell:
		var t client.Trade
		t, err = c.Trade(cr, client.TradeRequest{MarketID: markets[o.market], Side: sides[o.side], Type: o.kind.String(), Shares: money.Units(1)})
		if err == nil {
			amount := t.Cost
			if o.kind == opBuy {
				amount = -amount
			}
			o.entry = entry{txType: "trade_" + o.kind.String(), refID: t.TradeID, amount: amount, balanceAfter: t.BalanceAfter}
		}
	case opSplit, opMerge:
		var s client.SplitMerge
		s, err = c.SplitMerge(cr, client.SplitMergeRequest{MarketID: markets[o.market], Type: o.kind.String(), Amount: money.Units(1)})
		if err == nil {
			o.entry = entry{txType: o.kind.String(), amount: s.BalanceAfter - b.balance(false), balanceAfter: s.BalanceAfter}
			b.acknowledge(o)
			// The answer's share counts are those held after: they must be
			// what the bot's own record of its operations gives.
			if held := b.shares[o.market]; s.YesShares != held[0] || s.NoShares != held[1] {
				return acknowledged, fmt.Errorf("%s answered yes/no shares %s/%s; the bot's operations give %s/%s", o.kind, s.YesShares, s.NoShares, held[0], held[1])
			}
			return acknowledged, nil
		}
	case opDeposit:
		var a wire.DepositAnswer
		a, err = c.Deposit(cr, o.amount, o.txHash)
		if err == nil {
			if a.Deposit.Status != "credited" {
				return acknowledged, fmt.Errorf("deposit %s answered without a credited deposit: %+v", o.txHash, a.Deposit)
			}
			o.entry = entry{txType: "deposit", refID: a.Deposit.ID, amount: o.amount, balanceAfter: a.USDCBalance}
		}
	case opWithdraw:
		var a wire.WithdrawalAnswer
		a, err = c.Withdraw(cr, o.amount)
		if err == nil {
			if a.Withdrawal.ID == uuid.Nil {
				return acknowledged, fmt.Errorf("withdrawal answered without a withdrawal")
			}
			o.entry = entry{txType: "withdrawal", refID: a.Withdrawal.ID, amount: -o.amount, balanceAfter: a.USDCBalance}
		}
	case opKeyCreate:
		var k client.Key
		k, err = c.CreateKey(b.Session, client.KeyRequest{Name: o.keyName, Scopes: []string{"read"}})
		if err == nil {
			b.keys = append(b.keys, key{id: k.ID, name: o.keyName, secret: k.Key})
			return acknowledged, nil
		}
	case opKeyRevoke:
		err = c.RevokeKey(b.Session, b.keys[o.keyRef].id)
		if err == nil {
			b.keys[o.keyRef].revoked = true
			return acknowledged, nil
		}
	}
	var se *client.StatusError
	switch {
	case err == nil:
		b.acknowledge(o)
		return acknowledged, nil
	case errors.As(err, &se) && se.Status >= 400 && se.Status < 500:
		return refused, nil
	default:
		return inFlight, nil
	}
}

var sides = [2]string{"yes", "no"}

// acknowledge adds an acknowledged (or, at a verification, applied)
// operation of the ledger to the bot's state.
func (b *bot) acknowledge(o *op) {
	if o.usdc {
		b.usdc = append(b.usdc, o.entry)
	} else {
		b.kp = append(b.kp, o.entry)
	}
	b.applyShares(o)
}

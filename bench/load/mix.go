package load

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Op is one kind of request of the load.
type Op int

// The ops: four writes, then four reads.
const (
	OpBuy Op = iota
	OpSell
	OpSplit
	OpMerge
	OpActive
	OpMe
	OpPoints
	OpPortfolio
	numOps
)

var opNames = [numOps]string{"buy", "sell", "split", "merge", "active", "me", "points", "portfolio"}

// String names the operation as -mix spells it.
func (o Op) String() string { return opNames[o] }

// DefaultMix is the mix of marketd-load's -mix default: mostly trades,
// which are what the speed targets are stated for, with some of every
// other request.
const DefaultMix = "buy=40,sell=40,split=4,merge=4,active=3,me=3,points=3,portfolio=3"

// maxWeight bounds one weight of a mix.
const maxWeight = 1_000_000

// Mix holds the relative weight of each op.
type Mix struct {
	weights [numOps]int
	total   int
}

// ParseMix reads "op=weight,..." (ops buy, sell, split, merge, active, me,
// points, portfolio; a left-out op has weight 0).
func ParseMix(s string) (Mix, error) {
	var m Mix
	for item := range strings.SplitSeq(s, ",") {
		name, weight, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return Mix{}, fmt.Errorf("mix: %q is not op=weight", item)
		}
		op := -1
		for i, n := range opNames {
			if n == name {
				op = i
			}
		}
		if op < 0 {
			return Mix{}, fmt.Errorf("mix: unknown op %q (one of %s)", name, strings.Join(opNames[:], ", "))
		}
		w, err := strconv.Atoi(weight)
		if err != nil || w < 0 || w > maxWeight {
			return Mix{}, fmt.Errorf("mix: weight of %s: %q is not an integer from 0 to %d", name, weight, maxWeight)
		}
		m.total += w - m.weights[op]
		m.weights[op] = w
	}
	if m.total == 0 {
		return Mix{}, fmt.Errorf("mix: %q gives no op a weight", s)
	}
	return m, nil
}

// String returns the mix in ParseMix's form.
func (m Mix) String() string {
	var parts []string
	for op, w := range m.weights {
		if w > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", opNames[op], w))
		}
	}
	return strings.Join(parts, ",")
}

// TradesOnly reports whether the mix holds only buys and sells, the one
// request the least-trade baseline serves (bench/baseline).
func (m Mix) TradesOnly() bool {
	return m.weights[OpBuy]+m.weights[OpSell] == m.total
}

// pick draws an op with the mix's weights.
func (m Mix) pick(r *rand.Rand) Op {
	n := r.IntN(m.total)
	for op, w := range m.weights {
		if n < w {
			return Op(op)
		}
		n -= w
	}
	panic(fmt.Sprintf("BUG: mix %v drew %d past its total %d", m.weights, n, m.total))
}

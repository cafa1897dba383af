#!/usr/bin/env python3
"""Reference values for marketd/core/pricing, computed independently of the Go code.

Everything is computed with the standard decimal module from the plain
(non-stable) LS-LMSR formulas, in micro-units, with alpha taken as the exact
binary value of its float64 (Decimal(float) is exact):

    b     = alpha * (qy + qn)
    S     = exp(qy/b) + exp(qn/b)
    C(q)  = b * ln(S)
    pi_i  = exp(q_i/b) / S
    p_i   = alpha*ln(S) + pi_i - (qy*pi_y + qn*pi_n) / (qy + qn)

Prices are cross-checked against central differences of C, and every value is
recomputed at a higher precision and must agree to 50 significant digits.

Why the working precision is 400 digits and not 50: the plain price formula
subtracts terms of order 1 to get a price as small as 1e-217 (alpha 0.002,
q = (1e16, 1) micro-units, where d/b = 500 and the smaller price is about
2*exp(-500)); 50 digits would return 0 for it. 400 digits leave more than 50
significant digits after the worst cancellation in range (217 digits for the
price, 16 for C at 1e16 micro-units, plus the central difference step).

Usage:
    python3 reference.py          # Go table for reference_test.go (pasted)
    python3 reference.py random   # testdata/random_trades.txt (read by the test)
"""
import math
import random
import sys
from decimal import Decimal, getcontext, localcontext, ROUND_HALF_EVEN

WORK_PREC = 400
CHECK_PREC = 450
MAXQ = 10**16  # 1e10 units in micro-units

def cost(alpha, qy, qn):
    """C(q) from the plain formula b*ln(exp(qy/b)+exp(qn/b))."""
    a = Decimal(alpha)
    qy, qn = Decimal(qy), Decimal(qn)
    b = a * (qy + qn)
    return b * ((qy / b).exp() + (qn / b).exp()).ln()

def prices(alpha, qy, qn):
    """dC/dq_i from the plain closed form."""
    a = Decimal(alpha)
    qy, qn = Decimal(qy), Decimal(qn)
    Q = qy + qn
    b = a * Q
    ey, en = (qy / b).exp(), (qn / b).exp()
    S = ey + en
    piy, pin = ey / S, en / S
    common = a * S.ln() - (qy * piy + qn * pin) / Q
    return common + piy, common + pin

def central(alpha, qy, qn):
    """dC/dq_i by central differences, step 1e-60 of Q (error O(h^2))."""
    h = (Decimal(qy) + Decimal(qn)) * Decimal("1e-60")
    py = (cost(alpha, Decimal(qy) + h, qn) - cost(alpha, Decimal(qy) - h, qn)) / (2 * h)
    pn = (cost(alpha, qy, Decimal(qn) + h) - cost(alpha, qy, Decimal(qn) - h)) / (2 * h)
    return py, pn

def agree(x, y, digits=50):
    if x == y:
        return True
    return abs(x - y) <= abs(y) * Decimal(10) ** -digits

def at(prec, f, *args):
    with localcontext() as ctx:
        ctx.prec = prec
        return f(*args)

def checked(f, *args):
    """f at WORK_PREC, asserted equal to f at CHECK_PREC to 50 digits."""
    lo = at(WORK_PREC, f, *args)
    hi = at(CHECK_PREC, f, *args)
    if isinstance(lo, tuple):
        for x, y in zip(lo, hi):
            assert agree(x, y), (f.__name__, args, x, y)
    else:
        assert agree(lo, hi), (f.__name__, args, lo, hi)
    return lo

def trade_value(alpha, qy, qn, side, sell, shares):
    """Exact buy cost C(q+n e)-C(q) or sell proceeds C(q)-C(q-n e)."""
    q = [qy, qn]
    q2 = list(q)
    q2[side] += -shares if sell else shares
    def diff():
        c1 = cost(alpha, *q)
        c2 = cost(alpha, *q2)
        return c1 - c2 if sell else c2 - c1
    return checked(diff)

def fmt_exact(x):
    """Decimal string with 30 digits after the point (far below 1 micro-unit)."""
    with localcontext() as ctx:
        ctx.prec = WORK_PREC
        return str(x.quantize(Decimal("1e-30"), rounding=ROUND_HALF_EVEN))

def g17(x):
    """Shortest float64 literal nearest to x."""
    return repr(float(x))

DEFAULT_ALPHA = 0.05 / (2 * math.log(2))

# (name, alpha, qYes, qNo) in micro-units.
STATES = [
    ("default 1000 units", DEFAULT_ALPHA, 10**9, 10**9),
    ("default 3:1", DEFAULT_ALPHA, 3 * 10**9, 10**9),
    ("min alpha max imbalance yes", 0.002, MAXQ, 1),
    ("min alpha max imbalance no", 0.002, 1, MAXQ),
    ("min alpha equal max", 0.002, MAXQ, MAXQ),
    ("min alpha tiny equal", 0.002, 1, 1),
    ("min alpha slight imbalance", 0.002, 1_001_000_000, 10**9),
    ("min alpha 2:1", 0.002, 2 * 10**9, 10**9),
    ("min alpha near max", 0.002, MAXQ - 1, MAXQ),
    ("min alpha beyond 2^53", 0.002, 2**53 + 1, 2**53),
    ("max alpha equal", 1.0, 10**9, 10**9),
    ("max alpha equal max", 1.0, MAXQ, MAXQ),
    ("max alpha tiny equal", 1.0, 1, 1),
    ("max alpha max imbalance", 1.0, MAXQ, 1),
    ("alpha 0.5 tiny", 0.5, 1, 2),
    ("alpha 0.75 large imbalance", 0.75, 5 * 10**15, 3),
    ("alpha 0.3 odd max", 0.3, 7, MAXQ - 3),
    ("alpha 0.1 uneven", 0.1, 123_456_789, 987_654_321),
    ("alpha 0.01 2:1 large", 0.01, 10**12, 5 * 10**11),
    ("alpha 0.02 one unit", 0.02, 10**6, 10**6),
]

def trades_for(qy, qn):
    """A few buys and sells of each side: 1 micro-unit, a mid size, a big one."""
    out = []
    for side, qs in ((0, qy), (1, qn)):
        room = MAXQ - qs
        for n in sorted({1, max(1, qs // 7), room // 3, room}):
            if 1 <= n <= room:
                out.append((side, False, n))
        for n in sorted({1, qs // 2, qs - 1}):
            if 1 <= n <= qs - 1:
                out.append((side, True, n))
    return out

def table():
    print("// Code below generated by testdata/reference.py; do not edit by hand.")
    print("var referenceStates = []referenceState{")
    trades = []
    for i, (name, alpha, qy, qn) in enumerate(STATES):
        c = checked(cost, alpha, qy, qn)
        py, pn = checked(prices, alpha, qy, qn)
        cy, cn = at(WORK_PREC, central, alpha, qy, qn)
        assert agree(cy, py, 40) and agree(cn, pn, 40), (name, py, cy, pn, cn)
        print(f'\t{{name: "{name}", alpha: {alpha!r}, q: [2]money.Amount{{{qy}, {qn}}}, '
              f'cost: "{fmt_exact(c)}", yes: {g17(py)}, no: {g17(pn)}}},')
        for side, sell, n in trades_for(qy, qn):
            trades.append((i, side, sell, n, trade_value(alpha, qy, qn, side, sell, n)))
    print("}")
    print()
    print("var referenceTrades = []referenceTrade{")
    for i, side, sell, n, v in trades:
        print(f'\t{{state: {i}, side: {side}, sell: {str(sell).lower()}, shares: {n}, exact: "{fmt_exact(v)}"}},')
    print("}")

def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))

def random_trades(count=600, seed=20240601):
    """Random trades over the whole range: alpha qy qn side sell shares exact."""
    rng = random.Random(seed)
    print("# alpha qYes qNo side sell shares exact -- generated by reference.py random")
    for _ in range(count):
        alpha = rng.choice([0.002, 1.0, math.exp(rng.uniform(math.log(0.002), 0))])
        qy = log_uniform(rng, 1, MAXQ)
        qn = rng.choice([qy, log_uniform(rng, 1, MAXQ)])
        side = rng.randrange(2)
        qs = (qy, qn)[side]
        sell = qs > 1 and rng.random() < 0.5
        hi = qs - 1 if sell else MAXQ - qs
        if hi < 1:
            continue
        n = min(hi, log_uniform(rng, 1, max(hi, 2)))
        v = trade_value(alpha, qy, qn, side, sell, n)
        print(f"{alpha!r} {qy} {qn} {side} {int(sell)} {n} {fmt_exact(v)}")

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "random":
        random_trades()
    else:
        table()

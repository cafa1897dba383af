package core

import (
	"context"

	"github.com/google/uuid"

	"marketd/core/eip55"
	"marketd/core/money"
)

// LinkWallet links a wallet address to an account, stored in EIP-55 form
// (docs/API.md, "POST /api/wallet"): one wallet per account and one account per
// wallet. Linking the address the account already has logs nothing and
// answers it again.
func (e *Engine) LinkWallet(ctx context.Context, id uuid.UUID, address string) (AccountInfo, error) {
	addr, err := eip55.Parse(address)
	if err != nil { // ErrMalformed or ErrChecksum, whose texts are the reasons
		return AccountInfo{}, fieldErr("address", "%s", err)
	}
	if err := e.enter(); err != nil {
		return AccountInfo{}, err
	}
	defer e.leave()
	// Every change of a wallet link is made under custodyMu, so the
	// lookup cannot change between this check and the commit.
	e.st.custodyMu.Lock()
	// The account's own wallet is checked first (in editInfo): an account
	// that has one learns nothing of who holds another address.
	if other, taken := e.st.accountByWallet(addr); taken && other != id && e.walletOf(id) == "" {
		lsn := e.accountLSN(other)
		e.st.custodyMu.Unlock()
		return AccountInfo{}, e.refuse(ctx, lsn, ErrWalletTaken)
	}
	return e.editInfo(ctx, id, &e.st.custodyMu, func(_ *account, in *AccountInfo) (bool, error) {
		switch {
		case in.Wallet == addr:
			return false, nil
		case in.Wallet != "":
			return false, ErrWalletLinked
		}
		in.Wallet = addr
		return true, nil
	})
}

// UnlinkWallet removes an account's wallet and sets its trading mode back
// to KP. It is refused while the account holds USDC: a balance, or shares
// in a market's USDC book (docs/API.md, "DELETE /api/wallet").
func (e *Engine) UnlinkWallet(ctx context.Context, id uuid.UUID) (AccountInfo, error) {
	if err := e.enter(); err != nil {
		return AccountInfo{}, err
	}
	defer e.leave()
	e.st.custodyMu.Lock()
	return e.editInfo(ctx, id, &e.st.custodyMu, func(a *account, in *AccountInfo) (bool, error) {
		if in.Wallet == "" {
			return false, ErrNoWallet
		}
		if a.holdsUSDCLocked() {
			return false, ErrUSDCHeld
		}
		if a.openTransfersLocked(TransferDeposit) > 0 || a.openTransfersLocked(TransferWithdrawal) > 0 {
			return false, ErrTransfersOpen
		}
		in.Wallet, in.Mode = "", money.KP
		return true, nil
	})
}

// holdsUSDCLocked reports whether the account has a USDC balance or USDC
// shares. A position at zero shares holds nothing: it stays only for the
// settlement's referrer cap. Caller holds a.mu.
func (a *account) holdsUSDCLocked() bool {
	if a.balances[money.USDC] != 0 {
		return true
	}
	for p := range a.refs().positions.all() {
		if p.Currency == money.USDC && (p.Shares[Yes] > 0 || p.Shares[No] > 0) {
			return true
		}
	}
	return false
}

// walletOf returns an account's wallet, "" when none or no such account.
func (e *Engine) walletOf(id uuid.UUID) string {
	a := e.st.account(id)
	if a == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.wallet()
}

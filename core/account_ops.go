package core

import (
	"context"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Account name limits (docs/API.md, "POST /api/auth/register").
const (
	MinNameLen = 3
	MaxNameLen = 32
	// MaxPasswordHashBytes bounds the stored password hash.
	MaxPasswordHashBytes = 256
)

// NewAccount describes an account to create.
type NewAccount struct {
	Name         string // 3-32 characters of A-Z a-z 0-9 _ -
	PasswordHash []byte // the slow salted hash, computed by the caller
	Role         Role
	Bonus        money.Amount // KP minted to the account as its signup bonus
}

// ValidName reports whether name is a valid account name: 3-32 characters of
// A-Z a-z 0-9 _ - (docs/API.md, "POST /api/auth/register"). Callers check it
// before paying for a password hash; CreateAccount checks it again.
func ValidName(name string) bool {
	if len(name) < MinNameLen || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CreateAccount creates an account with its signup bonus and answers once
// it is durable. Names are unique ignoring case.
func (e *Engine) CreateAccount(ctx context.Context, req NewAccount) (AccountView, error) {
	switch {
	case !ValidName(req.Name):
		return AccountView{}, fieldErr("name", "must be 3-32 characters of A-Z, a-z, 0-9, _ and -")
	case len(req.PasswordHash) > MaxPasswordHashBytes:
		return AccountView{}, fieldErr("password", "hash too long")
	case req.Role != RoleSpeculator && req.Role != RoleAdmin:
		return AccountView{}, fieldErr("role", "unknown role")
	case req.Bonus < 0 || req.Bonus > MaxAmount:
		return AccountView{}, fieldErr("bonus", "out of range")
	}
	if err := e.enter(); err != nil {
		return AccountView{}, err
	}
	defer e.leave()
	now := e.now()
	e.st.namesMu.Lock()
	if id, taken := e.st.nameLookup(req.Name); taken {
		e.st.namesMu.Unlock()
		return AccountView{}, e.refuse(ctx, e.accountLSN(id), ErrNameTaken)
	}
	if req.Bonus > 0 {
		// The bonus's refusal (a supply at its cap), checked before the
		// account's memory is taken too; checked again below, under the
		// locks the record needs.
		e.st.supply.mu.Lock()
		var pre sums
		pre.mint(e.st.supply.minted[money.KP], e.st.supply.burned[money.KP], req.Bonus)
		e.st.supply.mu.Unlock()
		if pre.err != nil {
			e.st.namesMu.Unlock()
			return AccountView{}, pre.err
		}
	}
	// Taken from the state's arena only once the name is free and the
	// bonus can be minted: a refused request costs no account's memory
	// (arena.go).
	a := e.st.newAccount(e.ids.next())
	a.mu.Lock()
	e.st.supply.mu.Lock()
	p := &pending{}
	p.rec = Record{Kind: KindAccountCreated, Time: now}
	ac := p.addAccount(a)
	ac.Info = &AccountInfo{Name: req.Name, Role: req.Role, PasswordHash: req.PasswordHash, CreatedAt: now,
		ReferralCode: e.newReferralCode()}
	var s sums
	minted := e.st.supply.minted
	if req.Bonus > 0 {
		p.credit(ac, money.KP, TxSignupBonus, req.Bonus, req.Bonus, a.id, now)
		minted[money.KP] = s.mint(minted[money.KP], e.st.supply.burned[money.KP], req.Bonus)
	}
	p.rec.Supply = &SupplyChange{Prev: e.st.supply.lsn, Minted: minted, Burned: e.st.supply.burned}
	done := make(chan error, 1)
	if s.err == nil {
		e.commit(p, done, func() {
			e.st.accounts.store(a.id, a.ref)
			e.st.nameStore(req.Name, a.id)
		})
	}
	e.st.supply.mu.Unlock()
	a.mu.Unlock()
	e.st.namesMu.Unlock()
	if s.err != nil {
		return AccountView{}, s.err
	}
	if err := <-done; err != nil {
		return AccountView{}, err
	}
	v, _ := e.Account(a.id)
	return v, nil
}

// NameAvailable returns nil when no account has name (ignoring case), else
// ErrNameTaken once the account that holds it is durable: a caller that
// checks before paying for a password hash must not refuse a name on the
// strength of an account that a crash could still undo. CreateAccount
// checks again under its lock.
func (e *Engine) NameAvailable(ctx context.Context, name string) error {
	e.st.namesMu.Lock()
	id, taken := e.st.nameLookup(name)
	e.st.namesMu.Unlock()
	if !taken {
		return nil
	}
	return e.refuse(ctx, e.accountLSN(id), ErrNameTaken)
}

// newReferralCode draws a referral code no account has. Codes are drawn
// only under namesMu, so none can be taken between the check and the
// commit. With 40 random bits a draw collides once in a million at a
// million accounts; the loop is for that one.
func (e *Engine) newReferralCode() string {
	for {
		code := e.ids.code()
		if _, taken := e.st.accountByCode(code); !taken {
			return code
		}
	}
}

// accountLSN returns an account's LSN: the last change a refusal about it
// may rest on.
func (e *Engine) accountLSN(id uuid.UUID) uint64 {
	a := e.st.account(id)
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lsn
}

// ReferralApplied is the outcome of SetReferrer that an idempotent request
// stores: the referrer, its code and name, the bonus, and the account's KP
// balance after it.
type ReferralApplied struct {
	Referrer     uuid.UUID
	Code, Name   string
	Bonus        money.Amount
	BalanceAfter money.Amount
}

// SetReferrer records who referred an account, once, and mints the referral
// bonus to both (docs/API.md, "POST /api/referral/apply"); from then on the
// referrer accrues vig from the account's trades.
func (e *Engine) SetReferrer(ctx context.Context, accountID, referrerID uuid.UUID, bonus money.Amount) error {
	if accountID == referrerID {
		return ErrSelfReferral
	}
	if bonus < 0 || bonus > MaxAmount {
		return fieldErr("bonus", "out of range")
	}
	if err := e.enter(); err != nil {
		return err
	}
	defer e.leave()
	a, r := e.st.account(accountID), e.st.account(referrerID)
	if a == nil || r == nil || accountID == HouseID || referrerID == HouseID {
		return ErrAccountNotFound
	}
	unlock := lockAccounts(a, r)
	if a.info.Referrer != uuid.Nil {
		lsn := a.lsn
		unlock()
		return e.refuse(ctx, lsn, ErrReferrerSet)
	}
	if r.info.Referrer == accountID {
		// Each would earn from the other's losses; and the referral
		// bonuses of the two roles could not be told apart.
		lsn := r.lsn
		unlock()
		return e.refuse(ctx, lsn, ErrReferralCycle)
	}
	e.st.supply.mu.Lock()
	now := e.now()
	p := &pending{}
	p.rec = Record{Kind: KindReferrerSet, Time: now}
	var s sums
	info := a.infoOf()
	info.Referrer = referrerID
	p.addAccount(a)
	p.addAccount(r)
	// Taken after both appends: the first may move the slice.
	ac, rc := &p.rec.Accounts[0], &p.rec.Accounts[1]
	ac.Info = &info
	minted := e.st.supply.minted
	if bonus > 0 {
		p.credit(ac, money.KP, TxReferralBonus, bonus, s.add(a.balances[money.KP], bonus), referrerID, now)
		p.credit(rc, money.KP, TxReferralBonus, bonus, s.add(r.balances[money.KP], bonus), accountID, now)
		minted[money.KP] = s.mint(minted[money.KP], e.st.supply.burned[money.KP], s.add(bonus, bonus))
		p.rec.Supply = &SupplyChange{Prev: e.st.supply.lsn, Minted: minted, Burned: e.st.supply.burned}
	}
	// Both hear of it; each note names the other account.
	p.notify(a, ac, Note{Kind: NoteReferralApplied, Time: now, Ref: referrerID, Amount: bonus})
	p.notify(r, rc, Note{Kind: NoteReferralApplied, Time: now, Ref: accountID, Amount: bonus})
	after := a.balances[money.KP]
	if bonus > 0 {
		after = ac.Balances[0].After // the only balance the change sets
	}
	p.answer(ctx, ReferralApplied{Referrer: referrerID, Code: r.referralCode(), Name: r.name(),
		Bonus: bonus, BalanceAfter: after})
	done := make(chan error, 1)
	if s.err == nil {
		e.commit(p, done, nil)
	}
	e.st.supply.mu.Unlock()
	unlock()
	if s.err != nil {
		return s.err
	}
	return <-done
}

// WaitAccountDurable returns once every change of the account applied so
// far is durable, or the journal's error: a refusal that rests on the
// account's state (a wrong password against a hash a password change has
// just replaced) is answered only then (docs/API.md, "Durability").
func (e *Engine) WaitAccountDurable(ctx context.Context, id uuid.UUID) error {
	return e.refuse(ctx, e.accountLSN(id), nil)
}

package transport

import (
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/ratelimit"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// maxKeyDays bounds expires_in_days (docs/API.md, "POST /api/keys").
const maxKeyDays = 3650

type createKeyRequest struct {
	Name          *string           `json:"name"`
	Scopes        []string          `json:"scopes"`
	ExpiresInDays strictjson.Number `json:"expires_in_days"`
	RateLimitTier *string           `json:"rate_limit_tier"`
}

type revokedKey struct {
	ID     uuid.UUID `json:"id"`
	Status string    `json:"status"`
}

var scopeNames = []struct {
	name  string
	scope core.Scopes
}{{"read", core.ScopeRead}, {"trade", core.ScopeTrade}, {"admin", core.ScopeAdmin}}

func scopeList(s core.Scopes) []string {
	out := []string{}
	for _, n := range scopeNames {
		if s.Has(n.scope) {
			out = append(out, n.name)
		}
	}
	return out
}

func parseScopes(names []string) (core.Scopes, error) {
	if names == nil {
		return 0, fieldError("scopes", "is required")
	}
	var s core.Scopes
	for i, name := range names {
		found := false
		for _, n := range scopeNames {
			if n.name == name {
				s |= n.scope
				found = true
			}
		}
		if !found {
			return 0, fieldError("scopes", "item %d: unknown scope %q (read, trade or admin)", i, name)
		}
	}
	if s == 0 {
		return 0, fieldError("scopes", "must be a non-empty subset of read, trade, admin")
	}
	return s, nil
}

func (s *Server) createKey(ctx *fasthttp.RequestCtx, c *caller, req *createKeyRequest) error {
	if req.Name == nil {
		return fieldError("name", "is required")
	}
	if err := strictjson.Runes("name", *req.Name, 1, core.MaxKeyNameRunes); err != nil {
		return err
	}
	nk := core.NewKey{Account: c.account, Name: *req.Name, Tier: s.cfg.DefaultTier}
	var err error
	if nk.Scopes, err = parseScopes(req.Scopes); err != nil {
		return err
	}
	if req.ExpiresInDays.Set() {
		days, err := req.ExpiresInDays.Int("expires_in_days")
		if err != nil {
			return err
		}
		if days < 1 || days > maxKeyDays {
			return fieldError("expires_in_days", "must be an integer from 1 to %d", maxKeyDays)
		}
		nk.Lifetime = time.Duration(days) * 24 * time.Hour
	}
	if req.RateLimitTier != nil {
		t, ok := core.ParseTier(*req.RateLimitTier)
		if !ok {
			return fieldError("rate_limit_tier", "must be standard, premium or unlimited")
		}
		if t != s.cfg.DefaultTier && !s.isAdmin(c) {
			return errAdminRole
		}
		nk.Tier = t
	}
	if err := s.allowKeyChange(c.account); err != nil {
		return err
	}
	key, hash, prefix := newKeyLiteral()
	nk.Hash, nk.Prefix = hash, prefix
	k, err := s.eng.CreateKey(ctx, nk)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusCreated, newKeyOf(&k, key))
}

func (s *Server) isAdmin(c *caller) bool {
	a, ok := s.eng.Account(c.account)
	return ok && a.Info.Role == core.RoleAdmin
}

func newKeyOf(k *core.Key, key string) wire.NewKey {
	return wire.NewKey{
		ID:            k.ID,
		Name:          k.Name,
		Key:           key,
		KeyPrefix:     k.Prefix,
		Scopes:        scopeList(k.Scopes),
		RateLimitTier: k.Tier.String(),
		CreatedAt:     wire.Timestamp(k.CreatedAt),
		ExpiresAt:     wire.OptionalTime(k.ExpiresAt),
	}
}

// keyStatus is a key's state at nowNanos (docs/API.md, "GET /api/keys").
func keyStatus(k *core.Key, nowNanos int64) string {
	switch {
	case k.RevokedAt != 0:
		return "revoked"
	case !k.Active(nowNanos):
		return "expired"
	default:
		return "active"
	}
}

func (s *Server) listKeys(ctx *fasthttp.RequestCtx, c *caller) error {
	now := s.now().UnixNano()
	keys := s.eng.Keys(c.account)
	out := wire.KeyList{Count: len(keys), Keys: make([]wire.Key, 0, len(keys))}
	for i := range keys {
		k := &keys[i]
		out.Keys = append(out.Keys, wire.Key{
			ID:            k.ID,
			Name:          k.Name,
			KeyPrefix:     k.Prefix,
			Scopes:        scopeList(k.Scopes),
			RateLimitTier: k.Tier.String(),
			TotalRequests: k.TotalRequests,
			Status:        keyStatus(k, now),
			CreatedAt:     wire.Timestamp(k.CreatedAt),
			ExpiresAt:     wire.OptionalTime(k.ExpiresAt),
			LastUsedAt:    wire.OptionalTime(k.LastUsedAt),
		})
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

func (s *Server) revokeKey(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, revokedOf)(s.eng.RevokeKey(ctx, c.account, id))
}

func revokedOf(k core.Key) revokedKey { return revokedKey{ID: k.ID, Status: "revoked"} }

func (s *Server) rotateKey(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	if err := s.allowKeyChange(c.account); err != nil {
		return err
	}
	key, hash, prefix := newKeyLiteral()
	k, err := s.eng.RotateKey(ctx, c.account, id, hash, prefix)
	if err != nil {
		return err
	}
	// The new key takes over the old key's window before anyone knows the
	// new key: rotating must not buy a fresh window (docs/API.md, "Rate
	// limits").
	s.lim.keys.Move(ratelimit.Key{Kind: ratelimit.KindAPIKey, ID: id}, ratelimit.Key{Kind: ratelimit.KindAPIKey, ID: k.ID}, s.now())
	return writeJSON(ctx, fasthttp.StatusCreated, newKeyOf(&k, key))
}

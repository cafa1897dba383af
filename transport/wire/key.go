package wire

import (
	"github.com/google/uuid"
)

// NewKey is what creating or rotating a key answers: the only time the
// key itself is shown.
type NewKey struct {
	ID            uuid.UUID  `json:"id"`
	Name          string     `json:"name"`
	Key           string     `json:"key"`
	KeyPrefix     string     `json:"key_prefix"`
	Scopes        []string   `json:"scopes"`
	RateLimitTier string     `json:"rate_limit_tier"`
	CreatedAt     Timestamp  `json:"created_at"`
	ExpiresAt     *Timestamp `json:"expires_at"`
}

// Key is one of the account's keys, as GET /api/keys lists them.
type Key struct {
	ID            uuid.UUID  `json:"id"`
	Name          string     `json:"name"`
	KeyPrefix     string     `json:"key_prefix"`
	Scopes        []string   `json:"scopes"`
	RateLimitTier string     `json:"rate_limit_tier"`
	TotalRequests uint64     `json:"total_requests"`
	Status        string     `json:"status"` // active, expired or revoked
	CreatedAt     Timestamp  `json:"created_at"`
	ExpiresAt     *Timestamp `json:"expires_at"`
	LastUsedAt    *Timestamp `json:"last_used_at"`
}

// KeyList is the answer of GET /api/keys.
type KeyList struct {
	Count int   `json:"count"`
	Keys  []Key `json:"keys"`
}

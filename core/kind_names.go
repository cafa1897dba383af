package core

import "fmt"

// kindNames are the names of the record kinds, for the offline checker's
// dump of records and for logs.
var kindNames = map[Kind]string{
	KindAccountCreated:   "account_created",
	KindMarketCreated:    "market_created",
	KindTrade:            "trade",
	KindSplit:            "split",
	KindMerge:            "merge",
	KindSettle:           "settle",
	KindMarketClosed:     "market_closed",
	KindReferrerSet:      "referrer_set",
	KindKeyCreated:       "key_created",
	KindKeyRevoked:       "key_revoked",
	KindSessionCreated:   "session_created",
	KindSessionRevoked:   "session_revoked",
	KindKeyUsage:         "key_usage",
	KindProfile:          "profile",
	KindNotesRead:        "notes_read",
	KindDeposit:          "deposit",
	KindWithdrawal:       "withdrawal",
	KindOracleProposed:   "oracle_proposed",
	KindOracleChallenge:  "oracle_challenge",
	KindOracleVote:       "oracle_vote",
	KindOracleDeadline:   "oracle_deadline",
	KindDepositConfirmed: "deposit_confirmed",
	KindDepositRejected:  "deposit_rejected",
	KindWithdrawalSent:   "withdrawal_sent",
	KindWithdrawalFailed: "withdrawal_failed",
	KindOracleStakes:     "oracle_stakes",
	KindAuthPurged:       "auth_purged",
	KindPasswordChanged:  "password_changed",
	KindImage:            "image",
}

// String returns the kind's name, or "kind(N)" for a kind without one.
func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

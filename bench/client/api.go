package client

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/transport/wire"
)

// The answers are package wire's types, the ones the server encodes; the
// names below are the tools' names for them.

// Agent is the agent object (docs/API.md, "The agent object").
type Agent = wire.Agent

type namePassword struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// Register creates an account and returns its session and agent.
func (c *Client) Register(name, password string) (string, Agent, error) {
	return c.session("/api/auth/register", name, password, http.StatusCreated)
}

// Login opens a session of an existing account.
func (c *Client) Login(name, password string) (string, Agent, error) {
	return c.session("/api/auth/login", name, password, http.StatusOK)
}

func (c *Client) session(path, name, password string, status int) (string, Agent, error) {
	var a wire.AgentAnswer
	token, err := c.Call(http.MethodPost, path, Credentials{}, namePassword{name, password}, status, &a)
	if err != nil {
		return "", Agent{}, err
	}
	if token == "" {
		return "", Agent{}, fmt.Errorf("client: POST %s as %s: no %s cookie in the answer", path, name, sessionCookie)
	}
	return token, a.Agent, nil
}

// KeyRequest is the body of POST /api/keys.
type KeyRequest struct {
	Name          string   `json:"name"`
	Scopes        []string `json:"scopes"`
	RateLimitTier string   `json:"rate_limit_tier,omitempty"`
}

// Key is a created key, the key itself included.
type Key = wire.NewKey

// CreateKey creates an API key with a session.
func (c *Client) CreateKey(session string, r KeyRequest) (Key, error) {
	return answer[Key](c, http.MethodPost, "/api/keys", Credentials{Session: session}, r, http.StatusCreated)
}

// KeyInfo is one item of GET /api/keys.
type KeyInfo = wire.Key

// Keys lists the account's keys.
func (c *Client) Keys(cr Credentials) ([]KeyInfo, error) {
	l, err := answer[wire.KeyList](c, http.MethodGet, "/api/keys", cr, nil, http.StatusOK)
	return l.Keys, err
}

// Market is the market object.
type Market = wire.Market

// MarketRequest is the body of POST /api/markets.
type MarketRequest struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Category    string `json:"category"`
	ClosesAt    string `json:"closes_at"`
}

// CreateMarket creates a market (admin) that closes after closesIn.
func (c *Client) CreateMarket(cr Credentials, title string, closesIn time.Duration) (Market, error) {
	return answer[Market](c, http.MethodPost, "/api/markets", cr, MarketRequest{
		Title: title, Description: "Created by a marketd tool.", Category: "tools",
		ClosesAt: time.Now().Add(closesIn).UTC().Format(time.RFC3339),
	}, http.StatusCreated)
}

// GetMarket reads one market.
func (c *Client) GetMarket(id string) (Market, error) {
	return answer[Market](c, http.MethodGet, "/api/markets/"+id, Credentials{}, nil, http.StatusOK)
}

// TradeRequest is the body of POST /api/markets/trade (reference shape).
type TradeRequest struct {
	MarketID string       `json:"market_id"`
	Side     string       `json:"side"`
	Type     string       `json:"type"`
	Shares   money.Amount `json:"shares"`
}

// Trade is the answer of a trade.
type Trade = wire.Trade

// Trade buys or sells.
func (c *Client) Trade(cr Credentials, r TradeRequest) (Trade, error) {
	return answer[Trade](c, http.MethodPost, "/api/markets/trade", cr, r, http.StatusOK)
}

// SplitMergeRequest is the body of POST /api/markets/split-merge.
type SplitMergeRequest struct {
	MarketID string       `json:"market_id"`
	Type     string       `json:"type"`
	Amount   money.Amount `json:"amount"`
}

// SplitMerge is the answer of a split or a merge.
type SplitMerge = wire.SplitMerge

// SplitMerge splits or merges.
func (c *Client) SplitMerge(cr Credentials, r SplitMergeRequest) (SplitMerge, error) {
	return answer[SplitMerge](c, http.MethodPost, "/api/markets/split-merge", cr, r, http.StatusOK)
}

// LinkWallet links a wallet address to the account.
func (c *Client) LinkWallet(cr Credentials, address string) error {
	_, err := c.Call(http.MethodPost, "/api/wallet", cr, map[string]string{"address": address}, http.StatusOK, nil)
	return err
}

type depositRequest struct {
	Amount money.Amount `json:"amount"`
	TxHash string       `json:"tx_hash"`
}

// Deposit deposits USDC.
func (c *Client) Deposit(cr Credentials, amount money.Amount, txHash string) (wire.DepositAnswer, error) {
	return answer[wire.DepositAnswer](c, http.MethodPost, "/api/token/deposit", cr, depositRequest{amount, txHash}, http.StatusOK)
}

type withdrawRequest struct {
	Amount money.Amount `json:"amount"`
}

// Withdraw withdraws USDC to the linked wallet.
func (c *Client) Withdraw(cr Credentials, amount money.Amount) (wire.WithdrawalAnswer, error) {
	return answer[wire.WithdrawalAnswer](c, http.MethodPost, "/api/token/withdraw", cr, withdrawRequest{amount}, http.StatusOK)
}

// LedgerEntry is one entry of a ledger (GET /api/points, GET
// /api/token/balance).
type LedgerEntry = wire.LedgerItem

// Ledger is a whole ledger of one currency, oldest entry first, with the
// balance read with it.
type Ledger struct {
	Balance money.Amount
	Entries []LedgerEntry
	// Deposits and Withdrawals are the newest 100 of each (USDC only).
	Deposits    []wire.Deposit
	Withdrawals []wire.Withdrawal
}

// maxLedgerPage is the largest page GET /api/points and GET
// /api/token/balance give.
const maxLedgerPage = 1000

// KPLedger reads the account's whole KP ledger.
func (c *Client) KPLedger(cr Credentials) (Ledger, error) {
	return c.ledger(cr, "/api/points", false)
}

// USDCLedger reads the account's whole USDC ledger, its deposits and
// withdrawals.
func (c *Client) USDCLedger(cr Credentials) (Ledger, error) {
	return c.ledger(cr, "/api/token/balance", true)
}

// ledger pages through a ledger, newest first on the server, and returns
// it oldest first. The account must not change meanwhile.
func (c *Client) ledger(cr Credentials, path string, usdc bool) (Ledger, error) {
	var l Ledger
	for offset := 0; ; offset += maxLedgerPage {
		// Either answer decodes into this: the points' balance beside
		// the token balance's fields and the ledger page both have.
		var page struct {
			Balance money.Amount `json:"balance"`
			wire.TokenBalance
		}
		url := fmt.Sprintf("%s?limit=%d&offset=%d", path, maxLedgerPage, offset)
		if _, err := c.Call(http.MethodGet, url, cr, nil, http.StatusOK, &page); err != nil {
			return Ledger{}, err
		}
		if offset == 0 {
			l.Balance = page.Balance
			if usdc {
				l.Balance = page.USDC
			}
			l.Deposits, l.Withdrawals = page.Deposits, page.Withdrawals
		}
		l.Entries = append(l.Entries, page.Ledger...)
		if len(page.Ledger) < maxLedgerPage || len(l.Entries) >= page.Count {
			break
		}
	}
	slices.Reverse(l.Entries)
	return l, nil
}

// Position is an open position.
type Position = wire.Position

// Portfolio is the answer of GET /api/portfolio.
type Portfolio = wire.Portfolio

// GetPortfolio reads the account's portfolio.
func (c *Client) GetPortfolio(cr Credentials) (Portfolio, error) {
	return answer[Portfolio](c, http.MethodGet, "/api/portfolio", cr, nil, http.StatusOK)
}

// RevokeKey revokes one of the account's keys with a session.
func (c *Client) RevokeKey(session string, id uuid.UUID) error {
	_, err := c.Call(http.MethodDelete, "/api/keys/"+id.String(), Credentials{Session: session}, nil, http.StatusOK, nil)
	return err
}

// answer sends one request that expects status and returns its answer
// decoded as a T.
func answer[T any](c *Client, method, path string, cr Credentials, body any, status int) (T, error) {
	var v T
	_, err := c.Call(method, path, cr, body, status, &v)
	return v, err
}

package transport

import (
	"github.com/valyala/fasthttp"

	"marketd/core"
)

type linkWalletRequest struct {
	Address string `json:"address"`
}

type walletJSON struct {
	WalletAddress string `json:"wallet_address"`
}

// unlinkedJSON answers DELETE /api/wallet: no wallet, and the mode back at
// kp.
type unlinkedJSON struct {
	WalletAddress *string `json:"wallet_address"`
	TradingMode   string  `json:"trading_mode"`
}

func (s *Server) linkWallet(ctx *fasthttp.RequestCtx, c *caller, body *linkWalletRequest) error {
	if body.Address == "" {
		return fieldError("address", "is required")
	}
	return respond(ctx, fasthttp.StatusOK, walletOf)(s.eng.LinkWallet(ctx, c.account, body.Address))
}

func walletOf(info core.AccountInfo) walletJSON { return walletJSON{WalletAddress: info.Wallet} }

func (s *Server) unlinkWallet(ctx *fasthttp.RequestCtx, c *caller) error {
	return respond(ctx, fasthttp.StatusOK, unlinkedOf)(s.eng.UnlinkWallet(ctx, c.account))
}

func unlinkedOf(info core.AccountInfo) unlinkedJSON {
	return unlinkedJSON{WalletAddress: optionalString(info.Wallet), TradingMode: info.Mode.String()}
}

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

func (s *Server) linkWallet(ctx *fasthttp.RequestCtx, c *caller) error {
	var body linkWalletRequest
	if err := decodeBody(ctx, &body); err != nil {
		return err
	}
	if body.Address == "" {
		return fieldError("address", "is required")
	}
	info, err := s.eng.LinkWallet(ctx, c.account, body.Address)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, walletJSON{WalletAddress: info.Wallet})
}

func (s *Server) unlinkWallet(ctx *fasthttp.RequestCtx, c *caller) error {
	info, err := s.eng.UnlinkWallet(ctx, c.account)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, unlinkedOf(info))
}

func unlinkedOf(info core.AccountInfo) unlinkedJSON {
	return unlinkedJSON{WalletAddress: optionalString(info.Wallet), TradingMode: info.Mode.String()}
}

package transport

import (
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// settingsJSON is every setting with its value (docs/API.md, "GET
// /api/settings").
type settingsJSON struct {
	Notifications     bool   `json:"notifications"`
	ShowOnLeaderboard bool   `json:"show_on_leaderboard"`
	Theme             string `json:"theme"`
}

func settingsOf(st core.Settings) settingsJSON {
	return settingsJSON{Notifications: !st.NotificationsOff, ShowOnLeaderboard: !st.HideFromLeaderboard, Theme: st.Theme.String()}
}

// settingsPatchJSON is a PATCH body: any subset of the settings. A null
// counts as absent, as for every body (package strictjson).
type settingsPatchJSON struct {
	Notifications     *bool   `json:"notifications"`
	ShowOnLeaderboard *bool   `json:"show_on_leaderboard"`
	Theme             *string `json:"theme"`
}

func (s *Server) getSettings(ctx *fasthttp.RequestCtx, c *caller) error {
	a, err := s.account(c)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, settingsOf(a.Info.Settings))
}

func (s *Server) patchSettings(ctx *fasthttp.RequestCtx, c *caller, body *settingsPatchJSON) error {
	p := core.SettingsPatch{Notifications: body.Notifications, ShowOnLeaderboard: body.ShowOnLeaderboard}
	if body.Theme != nil {
		th, ok := core.ParseTheme(*body.Theme)
		if !ok {
			return fieldError("theme", "must be system, light or dark")
		}
		p.Theme = &th
	}
	return respond(ctx, fasthttp.StatusOK, settingsOf)(s.eng.UpdateSettings(ctx, c.account, p))
}

type personaJSON struct {
	Persona *string `json:"persona"`
}

func (s *Server) setPersona(ctx *fasthttp.RequestCtx, c *caller, body *personaJSON) error {
	if body.Persona == nil {
		return fieldError("persona", "is required")
	}
	if err := strictjson.Runes("persona", *body.Persona, 0, core.MaxPersonaRunes); err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, personaOf)(s.eng.SetPersona(ctx, c.account, *body.Persona))
}

func personaOf(info core.AccountInfo) personaJSON { return personaJSON{Persona: &info.Persona} }

type acceptTOSRequest struct {
	Version string `json:"version"`
}

type tosJSON struct {
	TOSVersion    string         `json:"tos_version"`
	TOSAcceptedAt wire.Timestamp `json:"tos_accepted_at"`
}

func (s *Server) acceptTOS(ctx *fasthttp.RequestCtx, c *caller, body *acceptTOSRequest) error {
	if err := strictjson.Runes("version", body.Version, 1, core.MaxTOSVersionRunes); err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, tosOf)(s.eng.AcceptTOS(ctx, c.account, body.Version))
}

func tosOf(info core.AccountInfo) tosJSON {
	return tosJSON{TOSVersion: info.TOSVersion, TOSAcceptedAt: wire.Timestamp(info.TOSAcceptedAt)}
}

type tradingModeRequest struct {
	Mode string `json:"mode"`
}

type tradingModeJSON struct {
	TradingMode string `json:"trading_mode"`
}

func (s *Server) setTradingMode(ctx *fasthttp.RequestCtx, c *caller, body *tradingModeRequest) error {
	if body.Mode == "" {
		return fieldError("mode", "is required")
	}
	mode, ok := money.ParseCurrency(body.Mode)
	if !ok {
		return fieldError("mode", "must be kp or usdc")
	}
	return respond(ctx, fasthttp.StatusOK, tradingModeOf)(s.eng.SetTradingMode(ctx, c.account, mode))
}

func tradingModeOf(info core.AccountInfo) tradingModeJSON {
	return tradingModeJSON{TradingMode: info.Mode.String()}
}

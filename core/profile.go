package core

import "marketd/internal/enum"

// ReferralCodeLen is the length of every account's referral code
// (docs/API.md, "GET /api/referral/code").
const ReferralCodeLen = 8

// Settings are an account's preferences (PATCH /api/settings). The zero
// value is every default, so that an account that never changed them, and
// the house, need no stored settings.
type Settings struct {
	// NotificationsOff stops new notifications being kept for the account.
	NotificationsOff bool
	// HideFromLeaderboard leaves the account out of the public leaderboard.
	HideFromLeaderboard bool
	// Theme is the interface theme a client should show.
	Theme Theme
}

// Theme is a client's colour theme. Values are written to disk.
type Theme uint8

// The themes.
const (
	ThemeSystem Theme = 0
	ThemeLight  Theme = 1
	ThemeDark   Theme = 2
)

// NumThemes is the number of themes.
const NumThemes = 3

var themeNames = enum.New[Theme]("theme", []string{ThemeSystem: "system", ThemeLight: "light", ThemeDark: "dark"})

// String returns the wire name of the theme.
func (t Theme) String() string { return themeNames.Name(t) }

// ParseTheme maps a theme's wire name to the Theme.
func ParseTheme(name string) (Theme, bool) { return themeNames.Parse(name) }

package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/social"
)

// socialSignIn makes the social module of OAUTH_PROVIDERS (names, comma
// separated; unset: off). Per provider NAME (upper case, '-' as '_'):
// OAUTH_NAME_CLIENT_ID and OAUTH_NAME_CLIENT_SECRET; OAUTH_NAME_ISSUER for
// any OpenID Connect provider (google and gitlab have theirs; microsoft
// takes OAUTH_MICROSOFT_TENANT; apple OAUTH_APPLE_TEAM_ID, _KEY_ID and
// _PRIVATE_KEY instead of a secret: appleSignIn); OAUTH_NAME_AUTHORITATIVE, the email
// domains ("*": all) whose verified claims the app trusts (the presets
// say theirs). Sign-ins wait in states, shared like the passkeys'
// ceremonies. It returns the description for the start-up log.
func (a *App) socialSignIn(env Env, appURL string, states onetime.Store, logger *slog.Logger) (string, error) {
	names := SplitList(env.Get("OAUTH_PROVIDERS", ""))
	if len(names) == 0 {
		return "off", nil
	}
	if _, ok := a.Service.Modules().Users().(user.Identities); !ok {
		return "", fmt.Errorf("OAUTH_PROVIDERS: the user store (DATABASE_URL) cannot hold linked identities")
	}
	var ps []social.ProviderConfig
	for _, name := range names {
		key := "OAUTH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_"
		id, secret := env.Get(key+"CLIENT_ID", ""), env.Get(key+"CLIENT_SECRET", "")
		if id == "" {
			return "", fmt.Errorf("OAUTH_PROVIDERS: %sCLIENT_ID is required", key)
		}
		var p social.ProviderConfig
		var err error
		switch issuer := env.Get(key+"ISSUER", ""); {
		case issuer != "":
			var o *social.OIDC
			if o, err = social.NewOIDC(social.OIDCConfig{Issuer: issuer, ClientID: id, ClientSecret: secret}); err == nil {
				p = social.ProviderConfig{Name: name, Provider: o}
			}
		case name == "google":
			p, err = social.Google(id, secret)
		case name == "gitlab":
			p, err = social.GitLab(id, secret)
		case name == "github":
			p, err = social.GitHub(id, secret)
		case name == "microsoft":
			p, err = social.Microsoft(env.Get(key+"TENANT", ""), id, secret)
		case name == "apple":
			p, err = appleSignIn(env, key, id)
		default:
			return "", fmt.Errorf("OAUTH_PROVIDERS: %sISSUER is required for %q", key, name)
		}
		if err != nil {
			return "", fmt.Errorf("OAUTH_PROVIDERS: %s: %w", name, err)
		}
		p.Label = socialLabel(env, name)
		if v, ok := env(key + "AUTHORITATIVE"); ok {
			p.Authoritative = SplitList(v)
		}
		ps = append(ps, p)
	}
	h, err := social.New(a.Service, social.Config{AppURL: appURL, Providers: ps, States: states, Logger: logger})
	if err != nil {
		return "", fmt.Errorf("OAUTH_PROVIDERS: %w", err)
	}
	a.Social = h
	a.closers = append(a.closers, func(context.Context) error { return h.Close() })
	return strings.Join(h.Providers(), ","), nil
}

// appleSignIn is the Apple preset of OAUTH_APPLE_CLIENT_ID (the Services
// ID), OAUTH_APPLE_TEAM_ID, OAUTH_APPLE_KEY_ID and OAUTH_APPLE_PRIVATE_KEY:
// the .p8 key's PEM itself, or the path of its file.
func appleSignIn(env Env, key, id string) (social.ProviderConfig, error) {
	team, kid, pk := env.Get(key+"TEAM_ID", ""), env.Get(key+"KEY_ID", ""), env.Get(key+"PRIVATE_KEY", "")
	if team == "" || kid == "" || pk == "" {
		return social.ProviderConfig{}, fmt.Errorf("%sTEAM_ID, %sKEY_ID and %sPRIVATE_KEY are required", key, key, key)
	}
	pemBytes := []byte(pk)
	if !strings.HasPrefix(strings.TrimSpace(pk), "-----BEGIN") {
		b, err := os.ReadFile(pk)
		if err != nil {
			return social.ProviderConfig{}, fmt.Errorf("%sPRIVATE_KEY: %w", key, err)
		}
		pemBytes = b
	}
	k, err := social.ParseApplePrivateKey(pemBytes)
	if err != nil {
		return social.ProviderConfig{}, fmt.Errorf("%sPRIVATE_KEY: %w", key, err)
	}
	return social.Apple(social.AppleConfig{ClientID: id, TeamID: team, KeyID: kid, PrivateKey: k})
}

// socialLabel is what the pages' button and the notices name:
// OAUTH_NAME_LABEL, or a preset's own spelling ("GitLab"), or the name
// with its first letter in upper case.
func socialLabel(env Env, name string) string {
	key := "OAUTH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_LABEL"
	def, ok := presetLabels[name]
	if !ok {
		def = strings.ToUpper(name[:1]) + name[1:]
	}
	return env.Get(key, def)
}

// presetLabels are the presets' names as their owners spell them.
var presetLabels = map[string]string{"google": "Google", "gitlab": "GitLab", "github": "GitHub", "microsoft": "Microsoft", "apple": "Apple"}

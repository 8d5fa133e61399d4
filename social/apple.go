package social

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
)

// AppleIssuer is Sign in with Apple's issuer.
const AppleIssuer = "https://appleid.apple.com"

// ApplePrivateRelay is the domain of the addresses Apple makes for a user
// who hides theirs ("Hide My Email"): one per user and app, forwarded to
// the user's real address.
const ApplePrivateRelay = "privaterelay.appleid.com"

// MaxAppleSecretLifetime is the longest an Apple client secret may last:
// Apple refuses one whose exp is more than 15777000 seconds (six months)
// after its iat.
const MaxAppleSecretLifetime = 15777000 * time.Second

// AppleConfig configures Sign in with Apple: a Services ID with "Sign in
// with Apple" enabled and AppURL + "/api/auth/oauth/apple/callback" as its
// return URL, and a private key for Sign in with Apple (the .p8 file) of
// the same team.
type AppleConfig struct {
	// ClientID is the Services ID ("com.example.web").
	ClientID string
	// TeamID is the team's ten-character id; KeyID the key's.
	TeamID, KeyID string
	// PrivateKey signs the client secrets (ParseApplePrivateKey reads the
	// .p8 file's PEM).
	PrivateKey *ecdsa.PrivateKey
	// SecretLifetime is how long each client secret lasts; one is made
	// for each token request. Default: 5 minutes; at most
	// MaxAppleSecretLifetime.
	SecretLifetime time.Duration
	// Issuer is Apple's issuer, AppleIssuer; another for tests only.
	Issuer string
	// HTTPClient makes every call to Apple. Default: http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock of the client secrets. Default: time.Now.
	Now func() time.Time
}

// Apple is "Sign in with Apple", named "apple". Apple answers with
// response_mode=form_post: its page POSTs code and state (and, on the
// user's first sign-in only, a "user" field with their name) to the
// callback, which hands them on to the GET callback (see Handler). The
// client secret is a JWT signed ES256 with the team's key, made anew for
// each token request (AppleClientSecret). The name Apple sends once
// names the account made on that first sign-in; Apple never sends it
// again, so it is not kept anywhere else.
//
// Apple asserts its users' addresses (email_verified, sometimes the
// string "true"), so it is authoritative for every domain, except its
// private relay addresses (ApplePrivateRelay): they make an account on a
// first sign-in as any verified address, but never link one that exists
// by its address (ProviderConfig.NoLinkDomains).
func Apple(cfg AppleConfig) (ProviderConfig, error) {
	switch {
	case cfg.ClientID == "" || cfg.TeamID == "" || cfg.KeyID == "":
		return ProviderConfig{}, errors.New("social: Apple needs ClientID, TeamID and KeyID")
	case cfg.PrivateKey == nil:
		return ProviderConfig{}, errors.New("social: Apple needs the PrivateKey")
	case cfg.SecretLifetime < 0 || cfg.SecretLifetime > MaxAppleSecretLifetime:
		return ProviderConfig{}, fmt.Errorf("social: Apple's SecretLifetime %s is not within six months", cfg.SecretLifetime)
	}
	if cfg.Issuer == "" {
		cfg.Issuer = AppleIssuer
	}
	if cfg.SecretLifetime == 0 {
		cfg.SecretLifetime = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	o, err := NewOIDC(OIDCConfig{Issuer: cfg.Issuer, ClientID: cfg.ClientID, Scopes: []string{"name", "email"}, HTTPClient: cfg.HTTPClient})
	if err != nil {
		return ProviderConfig{}, err
	}
	o.responseMode = "form_post"
	o.authStyle = oauth2.AuthStyleInParams // Apple takes client_secret_post only
	o.secret = func() (string, error) {
		return AppleClientSecret(AppleSecret{TeamID: cfg.TeamID, KeyID: cfg.KeyID, ClientID: cfg.ClientID,
			Audience: cfg.Issuer, Key: cfg.PrivateKey}, cfg.Now(), cfg.SecretLifetime)
	}
	return ProviderConfig{Name: "apple", Label: "Apple", Provider: &appleProvider{o}, Authoritative: []string{"*"},
		NoLinkDomains: []string{ApplePrivateRelay}}, nil
}

// AppleSecret is what an Apple client secret is made of.
type AppleSecret struct {
	TeamID, KeyID, ClientID string
	// Audience is AppleIssuer (the default when empty).
	Audience string
	Key      *ecdsa.PrivateKey
}

// AppleClientSecret returns an Apple client secret: a JWT signed ES256
// with s.Key, kid s.KeyID, whose iss is the team, sub the client,
// aud Apple, iat now and exp now+lifetime (at most
// MaxAppleSecretLifetime).
func AppleClientSecret(s AppleSecret, now time.Time, lifetime time.Duration) (string, error) {
	if lifetime <= 0 || lifetime > MaxAppleSecretLifetime {
		return "", fmt.Errorf("social: Apple client secret lifetime %s is not within six months", lifetime)
	}
	if s.Key == nil || s.Key.Curve != elliptic.P256() {
		return "", errors.New("social: Apple client secret: the key is not a P-256 key")
	}
	if s.Audience == "" {
		s.Audience = AppleIssuer
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: s.Key, KeyID: s.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("social: Apple client secret: %w", err)
	}
	out, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: s.TeamID, Subject: s.ClientID, Audience: jwt.Audience{s.Audience},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(lifetime))}).Serialize()
	if err != nil {
		return "", fmt.Errorf("social: Apple client secret: %w", err)
	}
	return out, nil
}

// ParseApplePrivateKey reads Apple's .p8 key file: a PEM "PRIVATE KEY"
// (PKCS 8) of a P-256 key.
func ParseApplePrivateKey(pemBytes []byte) (*ecdsa.PrivateKey, error) {
	b, _ := pem.Decode(pemBytes)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, errors.New("social: the Apple key is not a PEM PRIVATE KEY")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("social: the Apple key: %w", err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("social: the Apple key is not a P-256 key")
	}
	return ec, nil
}

// appleProvider is OIDC with the name Apple posts once: its ID token
// carries no name.
type appleProvider struct{ *OIDC }

func (a *appleProvider) Exchange(ctx context.Context, e ExchangeRequest) (*Claims, error) {
	c, err := a.OIDC.Exchange(ctx, e)
	if err != nil || c.Name != "" || e.User == "" {
		return c, err
	}
	c.Name = appleName(e.User)
	return c, nil
}

// appleName reads the name of Apple's user field,
// {"name":{"firstName":"…","lastName":"…"},"email":"…"}; "" when it is
// not that or holds a control character. The field comes through the browser, not in the signed ID
// token, so only the name is taken from it, never the address.
func appleName(user string) string {
	var u struct {
		Name struct {
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
		} `json:"name"`
	}
	if len(user) > 4096 || json.Unmarshal([]byte(user), &u) != nil {
		return ""
	}
	n := strings.TrimSpace(strings.TrimSpace(u.Name.FirstName) + " " + strings.TrimSpace(u.Name.LastName))
	if !utf8.ValidString(n) || strings.ContainsFunc(n, unicode.IsControl) {
		return "" // no name rather than a sign-up refused for it
	}
	return n
}

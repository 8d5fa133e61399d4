package social

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDCConfig configures an OpenID Connect provider found by discovery.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL ("https://accounts.google.com");
	// its discovery document must name exactly this issuer.
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes are asked for besides "openid". Default: "email", "profile".
	Scopes []string
	// HTTPClient makes every call to the provider. Default:
	// http.DefaultClient (each call bounded by the Handler's
	// Config.Timeout).
	HTTPClient *http.Client
}

// OIDC is a Provider for any OpenID Connect provider: discovery,
// authorization code with PKCE S256 and a nonce, the ID token verified by
// go-oidc (signature against the provider's published keys, issuer,
// audience, expiry), the email claims from the ID token or, when it has
// none, from the userinfo endpoint (whose subject must be the ID token's).
// The discovery document is fetched on first use and kept; a provider
// that is down then is asked again at the next sign-in.
type OIDC struct {
	cfg OIDCConfig

	mu       sync.Mutex
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier // with the provider's keys, fetched and cached by go-oidc
	meta     struct {
		IssParam bool `json:"authorization_response_iss_parameter_supported"`
	}

	// A preset's protocol variants (Apple): the response_mode asked for,
	// a client secret made for each token request, how it is sent.
	responseMode string
	secret       func() (string, error)
	authStyle    oauth2.AuthStyle
}

var _ Provider = (*OIDC)(nil)

// NewOIDC returns the provider of cfg. Issuer and ClientID are required;
// it makes no network call.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	u, err := url.Parse(cfg.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("social: OIDC issuer %q is not an http(s) URL", cfg.Issuer)
	}
	if cfg.ClientID == "" {
		return nil, errors.New("social: OIDC ClientID is required")
	}
	if cfg.Scopes == nil {
		cfg.Scopes = []string{"email", "profile"}
	}
	cfg.Scopes = slices.Clone(cfg.Scopes)
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	return &OIDC{cfg: cfg}, nil
}

// Issuer is the issuer URL the provider was configured with.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// discover returns the provider's discovery document, fetching it once.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	// A discovery that fails for any reason (down, 5xx, not JSON, another
	// issuer) leaves the provider unusable: unavailable, asked again next
	// time.
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.cfg.HTTPClient), o.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: discovery: %w", ErrUnavailable, err)
	}
	if err := p.Claims(&o.meta); err != nil {
		return nil, fmt.Errorf("social: discovery: %w", err)
	}
	o.provider = p
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID})
	return p, nil
}

func (o *OIDC) config(p *oidc.Provider, redirect string) *oauth2.Config {
	ep := p.Endpoint()
	ep.AuthStyle = o.authStyle
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: ep,
		RedirectURL: redirect, Scopes: append([]string{oidc.ScopeOpenID}, o.cfg.Scopes...)}
}

// AuthURL implements Provider.
func (o *OIDC) AuthURL(ctx context.Context, r AuthRequest) (string, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(r.Nonce),
		oauth2.SetAuthURLParam("code_challenge", r.CodeChallenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256")}
	if o.responseMode != "" {
		opts = append(opts, oauth2.SetAuthURLParam("response_mode", o.responseMode))
	}
	return o.config(p, r.RedirectURI).AuthCodeURL(r.State, opts...), nil
}

// Exchange implements Provider.
func (o *OIDC) Exchange(ctx context.Context, e ExchangeRequest) (*Claims, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return nil, err
	}
	// RFC 9207: an iss parameter, when sent, names the provider that
	// answered; one that announces it must send it (mix-up attacks).
	if (e.Issuer != "" || o.meta.IssParam) && e.Issuer != o.cfg.Issuer {
		return nil, fmt.Errorf("social: iss %q is not the issuer %q", e.Issuer, o.cfg.Issuer)
	}
	ctx = oidc.ClientContext(ctx, o.cfg.HTTPClient)
	cfg := o.config(p, e.RedirectURI)
	if o.secret != nil {
		if cfg.ClientSecret, err = o.secret(); err != nil {
			return nil, fmt.Errorf("social: client secret: %w", err)
		}
	}
	tok, err := cfg.Exchange(ctx, e.Code, oauth2.VerifierOption(e.CodeVerifier))
	if err != nil {
		return nil, classify("token", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return nil, errors.New("social: the token answer has no id_token")
	}
	idt, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, classify("id token", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(e.Nonce)) != 1 {
		return nil, errors.New("social: the ID token's nonce is not the sign-in's")
	}
	var cl struct {
		Email         string          `json:"email"`
		EmailVerified json.RawMessage `json:"email_verified"`
		Name          string          `json:"name"`
	}
	if err := idt.Claims(&cl); err != nil {
		return nil, fmt.Errorf("social: id token claims: %w", err)
	}
	c := &Claims{Subject: idt.Subject, Email: cl.Email, EmailVerified: trueClaim(cl.EmailVerified), Name: cl.Name}
	if c.Email == "" && p.UserInfoEndpoint() != "" {
		ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, classify("userinfo", err)
		}
		if ui.Subject != idt.Subject {
			return nil, errors.New("social: userinfo's subject is not the ID token's")
		}
		var more struct {
			EmailVerified json.RawMessage `json:"email_verified"`
			Name          string          `json:"name"`
		}
		if err := ui.Claims(&more); err != nil {
			return nil, fmt.Errorf("social: userinfo claims: %w", err)
		}
		c.Email, c.EmailVerified = ui.Email, trueClaim(more.EmailVerified)
		if c.Name == "" {
			c.Name = more.Name
		}
	}
	return c, nil
}

// trueClaim reads email_verified as true or "true" (some providers send a
// string); anything else is false.
func trueClaim(raw json.RawMessage) bool {
	s := string(raw)
	return s == "true" || s == `"true"`
}

// classify wraps err with ErrUnavailable when the provider could not be
// reached or failed on its side (a network error, a timeout, a 5xx).
func classify(step string, err error) error {
	var re *oauth2.RetrieveError
	var ne net.Error
	switch {
	case errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 500,
		errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, step, err)
	}
	return fmt.Errorf("social: %s: %w", step, err)
}

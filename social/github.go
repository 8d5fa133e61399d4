package social

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
)

// GitHubConfig configures the GitHub provider: an OAuth app (or a GitHub
// App's user authorization) under GitHub's Developer settings, with
// AppURL + "/api/auth/oauth/github/callback" as its callback URL.
type GitHubConfig struct {
	ClientID     string
	ClientSecret string
	// BaseURL is GitHub's web origin, for the authorization and token
	// endpoints ("/login/oauth/authorize", "/login/oauth/access_token").
	// Default: "https://github.com"; a GitHub Enterprise Server's origin.
	BaseURL string
	// APIURL is GitHub's REST API ("/user", "/user/emails"). Default:
	// "https://api.github.com"; GitHub Enterprise Server's is BaseURL +
	// "/api/v3".
	APIURL string
	// HTTPClient makes every call to GitHub. Default: http.DefaultClient
	// (each call bounded by the Handler's Config.Timeout).
	HTTPClient *http.Client
}

// GitHubProvider is a Provider for GitHub, which speaks OAuth 2.0 without
// OpenID Connect: no ID token, so the authorization code with PKCE S256
// (the state bound to the browser as for every provider) gives an access
// token, and the account is read from the REST API: its numeric id (the
// subject; the login can be renamed and reused) and name from /user, the
// address from /user/emails: the primary one, and verified only when
// GitHub says so. The scope asked for is "user:email".
type GitHubProvider struct {
	cfg GitHubConfig
}

var _ Provider = (*GitHubProvider)(nil)

// NewGitHub returns the GitHub provider of cfg; ClientID is required. It
// makes no network call.
func NewGitHub(cfg GitHubConfig) (*GitHubProvider, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("social: GitHub ClientID is required")
	}
	for _, u := range []*string{&cfg.BaseURL, &cfg.APIURL} {
		*u = strings.TrimRight(*u, "/")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://github.com"
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.github.com"
	}
	for _, u := range []string{cfg.BaseURL, cfg.APIURL} {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return nil, fmt.Errorf("social: GitHub URL %q is not an http(s) URL", u)
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	return &GitHubProvider{cfg: cfg}, nil
}

// GitHub is the "Sign in with GitHub" preset on github.com (see
// GitHubProvider). GitHub marks an address verified only after its owner
// confirmed it, so it is authoritative for every domain.
func GitHub(clientID, clientSecret string) (ProviderConfig, error) {
	p, err := NewGitHub(GitHubConfig{ClientID: clientID, ClientSecret: clientSecret})
	if err != nil {
		return ProviderConfig{}, err
	}
	return ProviderConfig{Name: "github", Label: "GitHub", Provider: p, Authoritative: []string{"*"}}, nil
}

func (g *GitHubProvider) config(redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: g.cfg.ClientID, ClientSecret: g.cfg.ClientSecret, RedirectURL: redirect,
		Scopes: []string{"user:email"}, Endpoint: oauth2.Endpoint{
			AuthURL: g.cfg.BaseURL + "/login/oauth/authorize", TokenURL: g.cfg.BaseURL + "/login/oauth/access_token",
			AuthStyle: oauth2.AuthStyleInParams}}
}

// AuthURL implements Provider. The nonce is not sent: without an ID
// token there is nothing to carry it.
func (g *GitHubProvider) AuthURL(_ context.Context, r AuthRequest) (string, error) {
	return g.config(r.RedirectURI).AuthCodeURL(r.State,
		oauth2.SetAuthURLParam("code_challenge", r.CodeChallenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256")), nil
}

// Exchange implements Provider.
func (g *GitHubProvider) Exchange(ctx context.Context, e ExchangeRequest) (*Claims, error) {
	if e.Issuer != "" && e.Issuer != g.cfg.BaseURL+"/login/oauth" {
		return nil, fmt.Errorf("social: iss %q is not GitHub's", e.Issuer)
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, g.cfg.HTTPClient)
	tok, err := g.config(e.RedirectURI).Exchange(ctx, e.Code, oauth2.VerifierOption(e.CodeVerifier))
	if err != nil {
		return nil, classify("token", err)
	}
	var u struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
		Name  string `json:"name"`
	}
	if err := g.get(ctx, tok.AccessToken, "/user", &u); err != nil {
		return nil, err
	}
	var emails []gitHubEmail
	if err := g.get(ctx, tok.AccessToken, "/user/emails", &emails); err != nil {
		return nil, err
	}
	return gitHubClaims(u.ID, u.Login, u.Name, emails)
}

// gitHubEmail is one entry of GitHub's /user/emails.
type gitHubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// gitHubClaims makes the Claims of a GitHub account: the numeric id as the
// subject, the name (or the login), and the primary address with GitHub's
// verified flag. A verified address that is not the primary one is never
// taken: the person chose the primary as theirs.
func gitHubClaims(id int64, login, name string, emails []gitHubEmail) (*Claims, error) {
	if id <= 0 {
		return nil, errors.New("social: GitHub's /user has no id")
	}
	c := &Claims{Subject: strconv.FormatInt(id, 10), Name: name}
	if c.Name == "" {
		c.Name = login
	}
	for _, m := range emails {
		if m.Primary {
			c.Email, c.EmailVerified = m.Email, m.Verified
			break
		}
	}
	return c, nil
}

// get reads one JSON answer of GitHub's REST API with the access token.
func (g *GitHubProvider) get(ctx context.Context, token, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.cfg.APIURL+path, nil)
	if err != nil {
		return fmt.Errorf("social: GitHub %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := g.cfg.HTTPClient.Do(req)
	if err != nil {
		return classify("GitHub "+path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case err != nil:
		return classify("GitHub "+path, err)
	case resp.StatusCode >= 500:
		return fmt.Errorf("%w: GitHub %s: %s", ErrUnavailable, path, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("social: GitHub %s: %s", path, resp.Status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("social: GitHub %s: %w", path, err)
	}
	return nil
}

package social

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/user"
)

// Prefix is the path the sign-in routes live under:
// Prefix+"/{provider}/start" and Prefix+"/{provider}/callback".
const Prefix = "/api/auth/oauth"

// StateCookie holds the key of the sign-in a browser has begun (a random
// value; the state itself is in Config.States).
const StateCookie = "authkit_oauth"

// DefaultStateLifetime is how long a sign-in may take from start to
// callback, unless Config.StateLifetime says otherwise.
const DefaultStateLifetime = 10 * time.Minute

// ProviderConfig is one provider of the Handler.
type ProviderConfig struct {
	// Name is the provider's name in the routes' paths and in the
	// identities the store keeps ("google"): lowercase letters, digits and
	// '-'. Changing it later orphans the identities linked under it.
	Name string
	// Label is the provider's name as people read it, on the buttons of
	// the pages and in the notices mailed when an account of it is linked
	// or unlinked ("Google"). Default: Name.
	Label string
	// Provider speaks the protocol: OIDC, or the app's own.
	Provider Provider
	// Authoritative lists the email domains ("example.com", or "*" for
	// every domain) for which this provider's verified email claim proves
	// that the person controls the address: the provider hosts those
	// addresses, or checks them before it says "verified" (Google,
	// GitHub's verified addresses). Only then is an existing local account
	// with that (verified) address linked on its first sign-in, and a new
	// account created on a first sign-in. Default: none (a first sign-in
	// answers auth.ErrSocialLinkRequired when the address has an account,
	// auth.ErrSocialEmailUnverified when not; a linked identity always
	// signs in). A provider that lets its users set any address
	// (Microsoft's email claim, a self-hosted OIDC server) is
	// authoritative for none.
	Authoritative []string
	// NoLinkDomains lists email domains whose addresses this provider's
	// claim never links to an existing account, even where it is
	// authoritative: addresses the provider makes for its users, such as
	// Apple's private relay (ApplePrivateRelay). Such an address still
	// makes an account on a first sign-in as any verified one; an
	// account that has it answers auth.ErrSocialLinkRequired (its owner
	// signs in and links the provider).
	NoLinkDomains []string
}

// Config configures the Handler. AppURL and Providers are required.
type Config struct {
	// AppURL is the app's public origin ("https://example.com"); the
	// redirect URI registered at each provider is AppURL + Prefix +
	// "/{name}/callback", exactly.
	AppURL string
	// Providers are the providers, each under its own name.
	Providers []ProviderConfig
	// LoginPath is where the callback sends a browser whose sign-in
	// failed, with ?error={code}. Default: "/login".
	LoginPath string
	// TwoFactorPath is where the callback sends a browser whose account
	// takes a second step (the 2fa_pending cookie is set). Default:
	// "/2fa".
	TwoFactorPath string
	// DefaultReturnTo is where a sign-in without returnTo lands. Default:
	// "/".
	DefaultReturnTo string
	// States keeps begun sign-ins between start and callback, each taken
	// once. Default: an in-process onetime.MemoryStore (one instance; give
	// several instances a shared one: redisstore.OneTime, sqlxstore's
	// DB.OneTime).
	States onetime.Store
	// StateLifetime is how long a begun sign-in lasts. Default:
	// DefaultStateLifetime.
	StateLifetime time.Duration
	// StartLimit limits the starts per client address, so that States
	// cannot be filled. Default: 30 per minute.
	StartLimit auth.Limit
	// Timeout bounds each call to a provider (discovery, token, keys,
	// userinfo). Default: 10 seconds.
	Timeout time.Duration
	// Logger receives why a provider call failed (never a token or a
	// secret). Default: slog.Default().
	Logger *slog.Logger
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Rand is the source of states, nonces, verifiers and cookie keys.
	// Default: crypto/rand.Reader.
	Rand io.Reader
	// AppRedirects are the redirect URIs of the app's native clients
	// (RFC 8252: a private-use scheme such as "com.example.app:/oauth",
	// or a claimed https URL), exactly as a start's appRedirect names
	// them. A sign-in started with one of them and a PKCE code challenge
	// ends in token mode (auth.Config.Tokens, needed) and sends the
	// browser to that URI with a one-time code, which the app exchanges
	// with its verifier (POST /api/auth/token/exchange, docs/mobile.md).
	// Default: none.
	AppRedirects []string
}

// Handler holds the social sign-in of one Service; New adds its routes to
// the Service's route table. Make one with New.
type Handler struct {
	svc       *auth.Service
	ids       user.Identities
	providers map[string]ProviderConfig
	cfg       Config
	secure    bool
	start     *auth.RateLimit
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// New returns the handler of svc's social sign-in and adds its routes to
// svc (auth.Modules.AddRoutes), so call it before mounting svc. svc's
// Config.Users must implement user.Identities.
func New(svc *auth.Service, cfg Config) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("social: New needs an auth.Service")
	}
	ids, ok := svc.Modules().IdentityStore() // observed, as core's store parts
	if !ok {
		return nil, fmt.Errorf("social: auth.Config.Users (%T) does not implement user.Identities, which social sign-in needs: implement it", svc.Modules().Users())
	}
	u, err := url.Parse(cfg.AppURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("social: Config.AppURL %q is not an origin (scheme://host[:port])", cfg.AppURL)
	}
	h := &Handler{svc: svc, ids: ids, cfg: cfg, providers: map[string]ProviderConfig{}, secure: u.Scheme == "https"}
	h.cfg.AppURL = u.Scheme + "://" + u.Host
	if len(cfg.Providers) == 0 {
		return nil, errors.New("social: Config.Providers is empty")
	}
	for _, p := range cfg.Providers {
		switch {
		case !nameRE.MatchString(p.Name):
			return nil, fmt.Errorf("social: provider name %q: lowercase letters, digits and '-', at most 32", p.Name)
		case p.Provider == nil:
			return nil, fmt.Errorf("social: provider %q has no Provider", p.Name)
		case h.providers[p.Name].Provider != nil:
			return nil, fmt.Errorf("social: provider %q configured twice", p.Name)
		}
		p.Authoritative, p.NoLinkDomains = slices.Clone(p.Authoritative), slices.Clone(p.NoLinkDomains)
		for _, ds := range [][]string{p.Authoritative, p.NoLinkDomains} {
			for i, d := range ds {
				ds[i] = strings.ToLower(strings.TrimSpace(d))
			}
		}
		if p.Label = strings.TrimSpace(p.Label); p.Label == "" {
			p.Label = p.Name
		}
		h.providers[p.Name] = p
		svc.Modules().LabelProvider(p.Name, p.Label)
	}
	h.cfg.Providers = nil
	h.cfg.AppRedirects = slices.Clone(cfg.AppRedirects)
	for _, r := range h.cfg.AppRedirects {
		ru, err := url.Parse(r)
		if err != nil || ru.Scheme == "" || ru.Fragment != "" || ru.RawQuery != "" || (ru.Scheme == "http" && ru.Hostname() != "127.0.0.1" && ru.Hostname() != "[::1]") {
			return nil, fmt.Errorf("social: Config.AppRedirects: %q is not a native app's redirect URI (a scheme of the app's, https, or http to a loopback address; no query or fragment)", r)
		}
	}
	if len(h.cfg.AppRedirects) > 0 && !svc.HasTokenMode() {
		return nil, errors.New("social: Config.AppRedirects needs auth.Config.Tokens: a native app's sign-in ends in tokens")
	}
	if h.cfg.LoginPath == "" {
		h.cfg.LoginPath = "/login"
	}
	if h.cfg.TwoFactorPath == "" {
		h.cfg.TwoFactorPath = "/2fa"
	}
	if h.cfg.DefaultReturnTo == "" {
		h.cfg.DefaultReturnTo = "/"
	}
	for _, p := range []string{h.cfg.LoginPath, h.cfg.TwoFactorPath, h.cfg.DefaultReturnTo} {
		if !localPath(p) {
			return nil, fmt.Errorf("social: %q is not a path of the app (it must start with one '/')", p)
		}
	}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
	}
	if h.cfg.Logger == nil {
		h.cfg.Logger = slog.Default()
	}
	if h.cfg.Rand == nil {
		h.cfg.Rand = rand.Reader
	}
	if h.cfg.States == nil {
		h.cfg.States = onetime.NewMemoryStore(onetime.MemoryConfig{Now: h.cfg.Now})
	}
	h.cfg.States = svc.Modules().ObserveOneTime("SocialStates", h.cfg.States)
	if h.cfg.StateLifetime <= 0 {
		h.cfg.StateLifetime = DefaultStateLifetime
	}
	if h.cfg.Timeout <= 0 {
		h.cfg.Timeout = 10 * time.Second
	}
	if h.cfg.StartLimit == (auth.Limit{}) {
		h.cfg.StartLimit = auth.Limit{Max: 30, Window: time.Minute}
	}
	if h.cfg.StartLimit.Max > 0 {
		if h.start, err = svc.NewRateLimit("social:start", h.cfg.StartLimit, nil, ""); err != nil {
			return nil, fmt.Errorf("social: %w", err)
		}
	}
	if err := svc.Modules().AddRoutes(h.routes()...); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("social: %w", err)
	}
	return h, nil
}

// Close stops the background work of the start limit's default store.
func (h *Handler) Close() error {
	if h.start != nil {
		return h.start.Close()
	}
	return nil
}

// RedirectURI returns the callback URL of the named provider, to register
// at the provider exactly as it is.
func (h *Handler) RedirectURI(provider string) string {
	return h.cfg.AppURL + Prefix + "/" + provider + "/callback"
}

// Providers returns the names of the configured providers, sorted.
func (h *Handler) Providers() []string {
	out := make([]string, 0, len(h.providers))
	for n := range h.providers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// begun is a sign-in between start and callback, as Config.States keeps
// it under the hash of the cookie's key.
type begun struct {
	Provider string `json:"p"`
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
	Remember bool   `json:"m,omitempty"`
	LinkUser string `json:"u,omitempty"` // the signed-in user a link was started by
	// A native app's sign-in (StartInput.AppRedirect).
	AppRedirect  string `json:"a,omitempty"`
	AppChallenge string `json:"c,omitempty"`
}

// StartInput is what Start and StartLink take.
type StartInput struct {
	Provider string
	// ReturnTo is where the browser lands after the callback: a path of
	// the app ("/settings"); anything else (another origin, "//host", a
	// scheme) is replaced by Config.DefaultReturnTo, never followed.
	ReturnTo string
	// Remember asks for a long-lived session.
	Remember bool
	// AppRedirect, with CodeChallenge, starts a native app's sign-in:
	// one of Config.AppRedirects, which the callback sends the browser to
	// with ?code= (or ?error=) instead of signing the browser in.
	AppRedirect string
	// CodeChallenge is the app's PKCE S256 challenge (RFC 7636): the
	// base64url SHA-256 of a verifier only the app knows.
	CodeChallenge string
}

// Start begins a sign-in (or a sign-up on first sign-in) with a provider:
// it keeps the state, nonce and PKCE verifier in Config.States, sets the
// StateCookie that binds them to this browser, and returns the
// provider's URL to send the browser to. It counts against
// Config.StartLimit. Errors: auth.ErrSocialProviderUnknown,
// auth.ErrTooManyRequests, auth.ErrSocialProviderUnavailable.
func (h *Handler) Start(ctx context.Context, v *auth.Visit, in StartInput) (string, error) {
	return h.begin(ctx, v, in, "")
}

// StartLink begins linking a provider to the visit's signed-in user, who
// must have authenticated recently (auth.ErrReauthenticationRequired;
// auth.ErrNotAuthenticated without a session). The callback links the
// provider's account to that user, and only to them.
func (h *Handler) StartLink(ctx context.Context, v *auth.Visit, in StartInput) (string, error) {
	u, err := h.svc.RecentUser(ctx, v)
	if err != nil {
		return "", err
	}
	return h.begin(ctx, v, in, u.ID)
}

func (h *Handler) begin(ctx context.Context, v *auth.Visit, in StartInput, linkUser string) (string, error) {
	p, ok := h.providers[in.Provider]
	if !ok {
		return "", auth.ErrSocialProviderUnknown
	}
	if h.start != nil {
		if err := h.start.Attempt(ctx, v); err != nil {
			return "", err
		}
	}
	key, err := h.random()
	if err != nil {
		return "", err
	}
	b := begun{Provider: p.Name, ReturnTo: h.returnTo(in.ReturnTo), Remember: in.Remember, LinkUser: linkUser}
	if in.AppRedirect != "" || in.CodeChallenge != "" {
		if linkUser != "" || !h.svc.HasTokenMode() || !slices.Contains(h.cfg.AppRedirects, in.AppRedirect) || !s256(in.CodeChallenge) {
			return "", auth.ErrSocialAppRedirectInvalid
		}
		b.AppRedirect, b.AppChallenge = in.AppRedirect, in.CodeChallenge
	}
	for _, dst := range []*string{&b.State, &b.Nonce, &b.Verifier} {
		if *dst, err = h.random(); err != nil {
			return "", err
		}
	}
	challenge := sha256.Sum256([]byte(b.Verifier))
	pctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	to, err := p.Provider.AuthURL(pctx, AuthRequest{State: b.State, Nonce: b.Nonce, RedirectURI: h.RedirectURI(p.Name),
		CodeChallenge: base64.RawURLEncoding.EncodeToString(challenge[:])})
	if err != nil {
		return "", h.providerError(ctx, p.Name, "start", err)
	}
	data, err := json.Marshal(b)
	if err != nil {
		return "", fmt.Errorf("social: start: %w", err)
	}
	if err := h.cfg.States.Put(ctx, storeKey(key), data, h.cfg.Now().Add(h.cfg.StateLifetime)); err != nil {
		return "", fmt.Errorf("social: start: keep the state: %w", err)
	}
	v.SetCookie(h.cookie(key, int(h.cfg.StateLifetime.Seconds())))
	return to, nil
}

// CallbackInput is the provider's answer, as the callback URL carries it.
type CallbackInput struct {
	Provider string
	State    string
	Code     string
	// Error is the provider's error parameter (access_denied, ...).
	Error string
	// Issuer is the iss parameter (RFC 9207); "" when absent.
	Issuer string
	// User is the user parameter Apple posts on a first sign-in (see
	// ExchangeRequest.User); "" when absent.
	User string
}

// CallbackResult is what a finished callback did.
type CallbackResult struct {
	Login *auth.LoginResult // the sign-in; nil for a link
	// Linked is the identity linked by this callback, nil when the
	// provider's account was linked already.
	Linked *user.Identity
	// ReturnTo is where the browser goes next: the start's returnTo, or
	// for a native app's sign-in its redirect with ?code= (AppCode set).
	ReturnTo string
	// App reports a native app's sign-in (StartInput.AppRedirect): the
	// browser goes to ReturnTo, the app's redirect, with AppCode, the
	// one-time code handed off to the app, or with the error's code.
	App     bool
	AppCode string
}

// Callback finishes what Start or StartLink began. The StateCookie must
// be present and its key's state equal in.State (the browser that started
// is the one that returns); the begun sign-in is taken from Config.States
// once, so a second callback with the same state, a replayed code and a
// callback without the cookie all fail with auth.ErrSocialStateInvalid
// and change nothing. The cookie is expired on every outcome.
//
// Then the provider's account (its subject) decides, in this order:
//   - linked to a user: that user signs in (auth.Modules.SignInExternal:
//     a 2FA account gets its second step, RequiresTwoFactor);
//   - not linked, and an account has the address: it is linked and
//     signed in only when the provider asserts the address verified, is
//     authoritative for its domain (ProviderConfig.Authoritative) and the
//     account's own address is verified; otherwise
//     auth.ErrSocialLinkRequired (the owner signs in, then links);
//   - no account: one is created (auth.Modules.RegisterExternal: the
//     registration switches and hooks apply), its address verified, with
//     the identity linked, when the provider asserts the address verified
//     and is authoritative for it (auth.ErrSocialEmailUnverified
//     otherwise).
//
// For a link (StartLink), the visit must still be signed in as the user
// who started it, and the provider's account must be linked to no other
// user (auth.ErrSocialIdentityTaken).
func (h *Handler) Callback(ctx context.Context, v *auth.Visit, in CallbackInput) (CallbackResult, error) {
	p, ok := h.providers[in.Provider]
	if !ok {
		return CallbackResult{}, auth.ErrSocialProviderUnknown
	}
	b, err := h.take(ctx, v, p.Name, in.State)
	if err != nil {
		return CallbackResult{}, err
	}
	if b.AppRedirect != "" {
		return h.appCallback(ctx, v, b, p, in)
	}
	return h.callbackWith(ctx, v, b, p, in)
}

// callbackWith finishes the begun sign-in or link b, taken from the store
// for in.
func (h *Handler) callbackWith(ctx context.Context, v *auth.Visit, b begun, p ProviderConfig, in CallbackInput) (CallbackResult, error) {
	res := CallbackResult{ReturnTo: b.ReturnTo}
	finish := func(ctx context.Context) (*Claims, error) {
		if in.Error != "" || in.Code == "" {
			return nil, auth.ErrSocialFailed
		}
		pctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
		defer cancel()
		c, err := p.Provider.Exchange(pctx, ExchangeRequest{Code: in.Code, CodeVerifier: b.Verifier, Nonce: b.Nonce,
			RedirectURI: h.RedirectURI(p.Name), Issuer: in.Issuer, User: in.User})
		if err != nil {
			return nil, h.providerError(ctx, p.Name, "callback", err)
		}
		if c == nil || c.Subject == "" {
			return nil, auth.ErrSocialFailed
		}
		return c, nil
	}
	if b.LinkUser != "" {
		linked, err := h.link(ctx, v, p, b.LinkUser, finish)
		res.Linked = linked
		return res, err
	}
	var linked *user.Identity
	lr, err := h.svc.Modules().SignInExternal(ctx, v, auth.ExternalSignInInput{Method: auth.LoginSocial, Remember: b.Remember,
		Verify: func(ctx context.Context) (string, error) {
			c, err := finish(ctx)
			if err != nil {
				return "", err
			}
			id, l, err := h.resolve(ctx, v, p, c)
			linked = l
			return id, err
		}})
	if err != nil {
		return CallbackResult{}, err
	}
	res.Login, res.Linked = &lr, linked
	return res, nil
}

// take checks the state against the browser's cookie and takes the begun
// sign-in from the store, once. The cookie goes whatever happens.
func (h *Handler) take(ctx context.Context, v *auth.Visit, provider, state string) (begun, error) {
	key, ok := v.Cookie(StateCookie)
	v.SetCookie(h.cookie("", -1))
	if !ok || key == "" || state == "" {
		return begun{}, auth.ErrSocialStateInvalid
	}
	data, err := h.cfg.States.Take(ctx, storeKey(key), h.cfg.Now())
	if errors.Is(err, onetime.ErrNotFound) {
		return begun{}, auth.ErrSocialStateInvalid
	}
	if err != nil {
		return begun{}, fmt.Errorf("social: callback: take the state: %w", err)
	}
	var b begun
	if err := json.Unmarshal(data, &b); err != nil {
		return begun{}, auth.ErrSocialStateInvalid
	}
	if b.Provider != provider || subtle.ConstantTimeCompare([]byte(b.State), []byte(state)) != 1 {
		return begun{}, auth.ErrSocialStateInvalid
	}
	return b, nil
}

// resolve finds or makes the user the provider's account signs in: see
// Callback.
func (h *Handler) resolve(ctx context.Context, v *auth.Visit, p ProviderConfig, c *Claims) (string, *user.Identity, error) {
	id, err := h.ids.IdentityBySubject(ctx, p.Name, c.Subject)
	if err == nil {
		return id.UserID, nil, nil
	}
	if !errors.Is(err, user.ErrNotFound) {
		return "", nil, fmt.Errorf("social: identity: %w", err)
	}
	email := strings.ToLower(strings.TrimSpace(c.Email))
	if email == "" || !c.EmailVerified {
		// Without an address the provider vouches for there is nothing
		// to match or to create an account with.
		return "", nil, auth.ErrSocialEmailUnverified
	}
	proves := authoritative(p.Authoritative, email)
	existing, err := h.svc.Modules().Users().ByEmail(ctx, email)
	switch {
	case err == nil:
		if !proves || inDomains(p.NoLinkDomains, email) {
			return "", nil, auth.ErrSocialLinkRequired
		}
		how := "email"
		if !existing.EmailVerified() {
			// Nobody proved this account's address until now: whoever
			// registered it may be an attacker waiting for the owner
			// (account pre-hijacking). The owner just proved it, so the
			// account is theirs, and what was set up before goes.
			if err := h.svc.Modules().ClaimUnverified(ctx, v, existing, email, "social"); err != nil {
				return "", nil, err
			}
			how = "claimed"
		}
		l, err := h.addIdentity(ctx, v, p, existing, c, how)
		if err != nil {
			return "", nil, err
		}
		return existing.ID, l, nil
	case !errors.Is(err, user.ErrNotFound):
		return "", nil, fmt.Errorf("social: account by email: %w", err)
	}
	if !proves {
		// An account whose address nobody proved, with this identity
		// linked, would be a door for whoever set it up once the real
		// owner of the address arrives (account pre-hijacking): no
		// sign-up on a claim the app does not trust.
		return "", nil, auth.ErrSocialEmailUnverified
	}
	u, err := h.svc.Modules().RegisterExternal(ctx, v, auth.ExternalRegistration{Email: email, EmailVerified: true, Name: c.Name})
	if errors.Is(err, auth.ErrEmailRegistered) {
		return "", nil, auth.ErrSocialLinkRequired // registered meanwhile
	}
	if err != nil {
		return "", nil, err
	}
	l, err := h.addIdentity(ctx, v, p, u, c, "sign-up")
	if err != nil {
		// The identity was linked meanwhile (a racing callback of the same
		// account): the account just made is nobody's; the sign-in fails
		// and the next one finds the link.
		if derr := h.svc.Modules().DeleteAccount(context.WithoutCancel(ctx), u.ID); derr != nil {
			return "", nil, fmt.Errorf("social: undo the sign-up after %w: %w", err, derr)
		}
		return "", nil, err
	}
	return u.ID, l, nil
}

// link links the provider's account to the user who started the link.
func (h *Handler) link(ctx context.Context, v *auth.Visit, p ProviderConfig, userID string, finish func(context.Context) (*Claims, error)) (*user.Identity, error) {
	u, err := h.svc.CurrentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if u.ID != userID {
		return nil, auth.ErrSocialStateInvalid // another user signed in meanwhile
	}
	c, err := finish(ctx)
	if err != nil {
		h.svc.Modules().Audit(ctx, v, auth.Event{Type: auth.EventLoginFailed, UserID: u.ID, Detail: "social link " + p.Name + ": " + string(auth.AsError(err).Code)})
		return nil, err
	}
	switch id, err := h.ids.IdentityBySubject(ctx, p.Name, c.Subject); {
	case err == nil && id.UserID == u.ID:
		return nil, nil // linked already
	case err == nil:
		return nil, auth.ErrSocialIdentityTaken
	case !errors.Is(err, user.ErrNotFound):
		return nil, fmt.Errorf("social: identity: %w", err)
	}
	return h.addIdentity(ctx, v, p, u, c, "signed in")
}

// addIdentity links the provider's account to u, audits it
// (EventIdentityLinked) and, unless the account was made for it a moment
// ago (how "sign-up"), mails u the KindIdentityLinked notice: a link the
// owner did not make is a new way into their account.
func (h *Handler) addIdentity(ctx context.Context, v *auth.Visit, p ProviderConfig, u *user.User, c *Claims, how string) (*user.Identity, error) {
	l, err := h.ids.AddIdentity(ctx, &user.Identity{UserID: u.ID, Provider: p.Name, Subject: c.Subject, Email: strings.ToLower(c.Email), LinkedAt: h.cfg.Now()})
	if errors.Is(err, user.ErrConflict) {
		return nil, auth.ErrSocialIdentityTaken
	}
	if err != nil {
		return nil, fmt.Errorf("social: link: %w", err)
	}
	h.svc.Modules().Audit(ctx, v, auth.Event{Type: auth.EventIdentityLinked, UserID: u.ID, Detail: p.Name + " (" + how + ")"})
	if how != "sign-up" {
		h.svc.Modules().Notify(ctx, v, mail.KindIdentityLinked, u, mail.Data{Provider: p.Label})
	}
	return l, nil
}

// IdentityInfo is a linked identity as the signed-in user sees it.
type IdentityInfo = auth.IdentityInfo

// Identities returns the visit's signed-in user's linked identities,
// oldest first (auth.ErrNotAuthenticated without a session): core's
// auth.Service.Identities.
func (h *Handler) Identities(ctx context.Context, v *auth.Visit) ([]IdentityInfo, error) {
	return h.svc.Identities(ctx, v)
}

// Unlink removes one of the signed-in user's identities: core's
// auth.Service.UnlinkIdentity. It needs a recent authentication
// (auth.ErrReauthenticationRequired). An id that is not one of the user's
// is auth.ErrIdentityNotFound. It refuses (auth.ErrLastSignInMethod) to
// remove the account's last way to sign in: an account without a
// password and without a passkey keeps at least one identity, and of
// racing unlinks of its last two one fails. The owner is mailed the
// KindIdentityUnlinked notice.
func (h *Handler) Unlink(ctx context.Context, v *auth.Visit, identityID string) error {
	return h.svc.UnlinkIdentity(ctx, v, identityID)
}

// providerError turns a provider's failure into the error the browser
// sees; the cause goes to the log, never to the client.
func (h *Handler) providerError(ctx context.Context, provider, step string, err error) error {
	h.cfg.Logger.WarnContext(ctx, "authkit social: provider call failed", "provider", provider, "step", step, "err", err)
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s %s: %w", auth.ErrSocialProviderUnavailable, provider, step, err)
	}
	return fmt.Errorf("%w: %s %s: %w", auth.ErrSocialFailed, provider, step, err)
}

// returnTo keeps a path of the app and replaces anything else.
func (h *Handler) returnTo(s string) string {
	if localPath(s) {
		return s
	}
	return h.cfg.DefaultReturnTo
}

// localPath reports whether s is a path of this origin: it starts with one
// '/', not "//" or "/\" (which browsers read as another host), holds no
// control character or backslash, and parses as a bare path.
func localPath(s string) bool {
	if len(s) == 0 || len(s) > 1024 || s[0] != '/' || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}

// authoritative reports whether a provider authoritative for domains
// proves email.
func authoritative(domains []string, email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	d := email[at+1:]
	return slices.ContainsFunc(domains, func(a string) bool { return a == "*" || a == d })
}

// inDomains reports whether email's domain is one of domains (no "*").
func inDomains(domains []string, email string) bool {
	at := strings.LastIndexByte(email, '@')
	return at >= 0 && slices.Contains(domains, email[at+1:])
}

func (h *Handler) random() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(h.cfg.Rand, b[:]); err != nil {
		return "", fmt.Errorf("social: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// storeKey is the States key of a cookie's key: its hash, so that the
// store never holds what the cookie carries.
func storeKey(key string) string {
	s := sha256.Sum256([]byte(key))
	return "social:" + base64.RawURLEncoding.EncodeToString(s[:])
}

// cookie is the StateCookie: sent back by the provider's top-level
// redirect (SameSite=Lax), only to the callback's paths.
func (h *Handler) cookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: StateCookie, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode}
}

// s256 reports whether c is a PKCE S256 code challenge: 43 base64url
// characters (RFC 7636 4.2).
func s256(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return len(c) == 43 && err == nil && len(b) == sha256.Size
}

// appCallback finishes a native app's sign-in: the sign-in runs in token
// mode, and what it issued (tokens, or the pending second step) is handed
// off under a one-time code for the app's redirect. A failure is sent to
// the app's redirect too, as ?error={code}.
func (h *Handler) appCallback(ctx context.Context, v *auth.Visit, b begun, p ProviderConfig, in CallbackInput) (CallbackResult, error) {
	res := CallbackResult{ReturnTo: b.AppRedirect, App: true}
	if err := h.svc.Modules().TokenVisit(v); err != nil {
		return res, err
	}
	b.AppRedirect = "" // the sign-in itself, as for a browser
	inner, err := h.callbackWith(ctx, v, b, p, in)
	if err == nil {
		res.Login, res.Linked = inner.Login, inner.Linked
		res.AppCode, err = h.svc.Modules().HandOff(ctx, v, b.AppChallenge)
	}
	return res, err
}

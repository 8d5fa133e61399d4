package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Entry points for sign-in through an outside identity provider (the
// social module: OpenID Connect and OAuth 2.0). As for passkeys, core
// keeps what every sign-in shares (the limits, the registration switches
// and hooks, the second step of a 2FA account, the session, the audit
// events) and the module brings the protocol. Core imports no OAuth
// library.

// LoginSocial is the LoginMethod of a sign-in through an outside identity
// provider, for an account without 2FA (or from a trusted browser). An
// account with 2FA still takes its second step, whose method is then the
// AfterLogin hook's.
const LoginSocial LoginMethod = "social"

// The security events of social sign-in (the social module reports them
// with [Modules.Audit]).
const (
	// EventIdentityLinked: a provider's account was linked to the user
	// (Detail: the provider's name and how: "signed in", "email",
	// "sign-up").
	EventIdentityLinked EventType = "identity_linked"
	// EventIdentityUnlinked: the signed-in user unlinked a provider's
	// account (Detail: the provider's name).
	EventIdentityUnlinked EventType = "identity_unlinked"
	// EventUnverifiedSetupRevoked: the owner of an unverified account's
	// address proved it through a provider, and what was set up before
	// (password, passkeys, TOTP, sessions, trusted devices) was revoked
	// (Detail: the method, "social").
	EventUnverifiedSetupRevoked EventType = "unverified_setup_revoked"
)

// The errors of social sign-in. The callback answers every one of them
// with a redirect to the app's login page carrying the code (never 5xx).
var (
	ErrSocialProviderUnknown     = def(404, "social_provider_unknown", "Unknown sign-in provider")
	ErrSocialStateInvalid        = def(400, "social_state_invalid", "Sign-in request expired or already used. Start again.")
	ErrSocialFailed              = def(400, "social_failed", "Sign-in with the provider failed. Try again.")
	ErrSocialProviderUnavailable = def(502, "social_provider_unavailable", "The sign-in provider did not answer. Try again later.")
	ErrSocialEmailUnverified     = def(400, "social_email_unverified", "The provider did not confirm your email address")
	ErrSocialLinkRequired        = def(409, "social_link_required", "An account with this email exists. Sign in to it, then link this provider from your account.")
	ErrSocialSignUpClosed        = def(403, "social_signup_closed", "No account uses this sign-in, and sign-up is closed")
	ErrSocialIdentityTaken       = def(409, "social_identity_taken", "This provider account is linked to another user")
	ErrSocialAppRedirectInvalid  = def(400, "social_app_redirect_invalid", "Unknown app redirect or code challenge")
	ErrIdentityNotFound          = def(404, "identity_not_found", "Linked account not found")
	ErrLastSignInMethod          = def(400, "last_sign_in_method", "This is your only way to sign in. Set a password or link another account first.")
)

// ExternalSignInInput is what SignInExternal takes.
type ExternalSignInInput struct {
	// Method names the sign-in method for the audit events and, for an
	// account without a second step, the AfterLogin hook. Default:
	// LoginSocial.
	Method LoginMethod
	// Verify finishes the provider's side (the callback's checks) and
	// returns the id of the user it signs in. It runs after the client
	// address's login limit counted the attempt; an error refuses the
	// sign-in (an *Error audited as EventLoginFailed).
	Verify func(ctx context.Context) (userID string, err error)
	// Remember asks for a long-lived session (Config.RememberLifetime).
	Remember bool
}

// SignInExternal is a first factor verified outside core: the sign-in of
// an outside identity provider. Unlike SignInWithoutPassword, it is not
// every factor at once: an account with 2FA on gets the 2fa_pending
// cookie (RequiresTwoFactor) and finishes with any second factor, unless
// the browser is a trusted one (Config.TrustedDevices). The attempt counts
// against Limits.LoginIP before in.Verify runs and a success gives it
// back; the lock-out does not apply (no password was guessed). A success
// runs AfterLogin, starts the session, audits EventLoginSucceeded and
// sends the new-device notice, as Login does.
func (m *Modules) SignInExternal(ctx context.Context, v *Visit, in ExternalSignInInput) (_ LoginResult, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "login/external")
	defer flow.end(&err)
	if in.Verify == nil {
		return LoginResult{}, errors.New("auth: SignInExternal: Verify is required")
	}
	if in.Method == "" {
		in.Method = LoginSocial
	}
	ipv, err := s.check(ctx, v, s.lim.loginIP, v.ClientIP())
	if err != nil {
		return LoginResult{}, err
	}
	s.rateHeaders(v.header, ipv)
	id, err := in.Verify(ctx)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: id, Detail: string(in.Method) + ": " + string(e.Code)})
			return LoginResult{}, err
		}
		return LoginResult{}, fmt.Errorf("sign in %s: %w", in.Method, err)
	}
	u, err := s.users.ByID(ctx, id)
	if errors.Is(err, user.ErrNotFound) {
		s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: id, Detail: string(in.Method) + ": account deleted"})
		return LoginResult{}, ErrInvalidCredentials
	}
	if err != nil {
		return LoginResult{}, fmt.Errorf("sign in %s: load user: %w", in.Method, err)
	}
	if s.refundLimit(ctx, v, s.lim.loginIP, v.ClientIP(), ipv) {
		ipv.res.Remaining = min(ipv.res.Remaining+1, ipv.res.Limit)
		s.rateHeaders(v.header, ipv)
	}
	how := in.Method
	if u.TwoFactorEnabled {
		trusted, err := s.trustedRecord(ctx, v, u)
		if err != nil {
			return LoginResult{}, fmt.Errorf("sign in %s: %w", in.Method, err)
		}
		if trusted == "" {
			return s.startPending(ctx, v, u, firstFactor{how: in.Method, remember: in.Remember})
		}
		how = LoginTrustedDevice
	}
	if err := s.afterLogin(ctx, u, how); err != nil {
		return LoginResult{}, err
	}
	s.clearPending(v)
	if err := s.startSession(ctx, v, u, in.Remember); err != nil {
		return LoginResult{}, fmt.Errorf("sign in %s: session: %w", in.Method, err)
	}
	s.audit(ctx, v, Event{Type: EventLoginSucceeded, UserID: u.ID, Detail: string(in.Method)})
	s.signedIn(ctx, v, u)
	return LoginResult{User: u}, nil
}

// ExternalRegistration is what RegisterExternal takes: the account an
// outside identity provider describes.
type ExternalRegistration struct {
	// Email is the provider's address for the person, as they gave it
	// (it is trimmed and lowercased).
	Email string
	// EmailVerified: the provider asserts the address verified and the app
	// trusts it to (the social module decides). The account is created
	// verified; otherwise the verification link is mailed, as at sign-up.
	EmailVerified bool
	// Name is the display name; a missing one is allowed whatever
	// Config.NameOptional says (providers do not always send one), and a
	// longer one is cut at 200 characters.
	Name string
}

// RegisterExternal creates an account without a password for a person an
// outside identity provider signed in, on their first sign-in. The
// registration switches and hooks apply as for Register: with
// FeatureRegistration off it fails with ErrSocialSignUpClosed, the
// registration limit of the client's address counts it, BeforeRegister
// may veto it and a failed AfterRegister undoes it. An address in use
// fails with ErrEmailRegistered. It starts no session (the caller links
// the identity, then signs in with SignInExternal) and audits
// EventRegistered.
func (m *Modules) RegisterExternal(ctx context.Context, v *Visit, in ExternalRegistration) (_ *user.User, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "register/external")
	defer flow.end(&err)
	if s.enabled(FeatureRegistration) != nil || s.users.registration == nil {
		return nil, ErrSocialSignUpClosed
	}
	name := strings.TrimSpace(in.Name)
	if err := checkText(text{"email", in.Email}, text{"name", name}); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = string([]rune(name)[:maxNameRunes])
	}
	if err := s.checkShown(ctx, v, s.lim.register, v.ClientIP()); err != nil {
		return nil, err
	}
	email, err := normalizeEmail(in.Email)
	if err != nil {
		return nil, err
	}
	reg := &Registration{Email: email, Name: name, Fields: map[string]string{}}
	if err := s.beforeRegister(ctx, reg); err != nil {
		return nil, err
	}
	nu := &user.User{Email: email, Name: name}
	if in.EmailVerified {
		nu.EmailVerifiedAt = s.now()
	}
	u, err := s.createAccount(ctx, nu, reg, "register external")
	if err != nil {
		return nil, err
	}
	if !u.EmailVerified() && s.enabled(FeatureEmailVerification) == nil {
		if err := s.sendVerification(ctx, v, u, u.Email); err != nil {
			return nil, fmt.Errorf("register external: verification token: %w", err)
		}
	}
	s.audit(ctx, v, Event{Type: EventRegistered, UserID: u.ID, Detail: "external"})
	return u, nil
}

// DeleteAccount deletes an account a module created a moment ago and could
// not finish (RegisterExternal, then a failed link): the same undo as a
// failed AfterRegister hook, on the deletion path of Service.DeleteAccount
// (the user with its passkeys and identities, then its email code, session
// records and trusted devices) but without Hooks.BeforeDeleteAccount,
// which could veto an undo, nor the notice or the audit of a deletion. It
// fails with ErrFeatureDisabled when the store has no user.Registration.
func (m *Modules) DeleteAccount(ctx context.Context, id string) error {
	s := m.svc()
	if s.users.registration == nil {
		return ErrFeatureDisabled
	}
	if _, err := eraseUser(ctx, s.cfg.Users, nil, &user.User{ID: id}, s.runHook); err != nil {
		return fmt.Errorf("delete account: %w", err)
	}
	eraseOwned(context.WithoutCancel(ctx), s.cfg.Users, s.cfg.Sessions, s.cfg.TrustedDevices, id, func(what string, err error) {
		s.log.WarnContext(ctx, "authkit: delete account: "+what+" not deleted", "user", id, "err", err)
	})
	return nil
}

// Redirect is a route's answer that sends the browser elsewhere: a
// RouteFunc returns it as its body (with a nil error) and the route
// answers Status (302 Found or 303 See Other) with Location, the visit's
// cookies and headers, Cache-Control: no-store and no body. The social
// module's start and callback routes answer this way.
type Redirect struct {
	Status   int
	Location string
}

// redirect renders rd with the visit's cookies and headers.
func (s *Service) redirect(v *Visit, rd Redirect) Response {
	h := http.Header{}
	for k, vs := range v.header {
		h[k] = vs
	}
	h.Set("Location", rd.Location)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff") // as every answer of authkit's, the OpenAPI document says
	return Response{Status: rd.Status, Header: h, Cookies: v.cookies}
}

// QueryRequest is a Request that also hands out its URL's raw query (the
// part after '?'), for the routes that read it (the social module's
// callback). The framework modules' requests implement it; a Request
// without it has an empty query.
type QueryRequest interface {
	Request
	// RawQuery is the URL's query, still encoded, without the '?'.
	RawQuery() string
}

// Query returns the values of the request's URL query; none when the
// request does not implement QueryRequest or its query does not parse.
func (v *Visit) Query() url.Values {
	q, ok := v.req.(QueryRequest)
	if !ok {
		return url.Values{}
	}
	vals, err := url.ParseQuery(q.RawQuery())
	if err != nil {
		return url.Values{}
	}
	return vals
}

// IdentityStore returns the user store's user.Identities part as the
// flows call the store (each call reported to Config.Observer as part
// "Identities" when one is set, as core's own parts are), and false when
// Config.Users has no such part: for the social module, which takes it
// once, in its constructor.
func (m *Modules) IdentityStore() (user.Identities, bool) {
	s := m.svc()
	ids, ok := s.cfg.Users.(user.Identities)
	if !ok {
		return nil, false
	}
	if s.cfg.Observer != nil {
		return obsIdentities{ids, s.cfg.Observer}, true
	}
	return ids, true
}

// obsIdentities reports every call to a user.Identities to an Observer.
type obsIdentities struct {
	p user.Identities
	o Observer
}

func (w obsIdentities) AddIdentity(ctx context.Context, id *user.Identity) (*user.Identity, error) {
	return observe(w.o, ctx, "Identities", "AddIdentity", func(ctx context.Context) (*user.Identity, error) { return w.p.AddIdentity(ctx, id) })
}

func (w obsIdentities) IdentityBySubject(ctx context.Context, provider, subject string) (*user.Identity, error) {
	return observe(w.o, ctx, "Identities", "IdentityBySubject", func(ctx context.Context) (*user.Identity, error) {
		return w.p.IdentityBySubject(ctx, provider, subject)
	})
}

func (w obsIdentities) ListIdentities(ctx context.Context, userID string) ([]*user.Identity, error) {
	return observe(w.o, ctx, "Identities", "ListIdentities", func(ctx context.Context) ([]*user.Identity, error) { return w.p.ListIdentities(ctx, userID) })
}

func (w obsIdentities) DeleteIdentity(ctx context.Context, userID, identityID string, keepOne bool) error {
	return observe0(w.o, ctx, "Identities", "DeleteIdentity", func(ctx context.Context) error { return w.p.DeleteIdentity(ctx, userID, identityID, keepOne) })
}

// IdentityInfo is an identity linked to the signed-in user, as they see
// it (GET /api/auth/identities).
type IdentityInfo struct {
	ID        string    `json:"id"`
	Provider  string    `json:"provider"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"createdAt"`
}

// Identities returns the signed-in user's identities at outside
// providers (the social module links them), oldest first; none is an
// empty slice. Without a session it fails with ErrNotAuthenticated, and
// with ErrFeatureDisabled when the user store has no user.Identities.
func (s *Service) Identities(ctx context.Context, v *Visit) (_ []IdentityInfo, err error) {
	ctx, flow := s.enter(ctx, v, "identities")
	defer flow.end(&err)
	ids, ok := s.Modules().IdentityStore()
	if !ok {
		return nil, ErrFeatureDisabled
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	list, err := ids.ListIdentities(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("identities: %w", err)
	}
	out := make([]IdentityInfo, len(list))
	for i, id := range list {
		out[i] = IdentityInfo{ID: id.ID, Provider: id.Provider, Email: id.Email, CreatedAt: id.LinkedAt.UTC()}
	}
	return out, nil
}

// UnlinkIdentity removes one of the signed-in user's identities
// (DELETE /api/auth/identities/{id}). It needs a recent authentication
// (ErrReauthenticationRequired); an id that is not one of the user's is
// ErrIdentityNotFound. It refuses (ErrLastSignInMethod) to remove the
// account's last way to sign in: an account without a password and
// without a passkey keeps at least one identity, and of racing unlinks of
// its last two one fails. A success is audited (EventIdentityUnlinked,
// Detail: the provider's name) and mails the owner the
// KindIdentityUnlinked notice, naming the provider by the label its
// module gave it (Modules.LabelProvider).
func (s *Service) UnlinkIdentity(ctx context.Context, v *Visit, identityID string) (err error) {
	ctx, flow := s.enter(ctx, v, "identities/unlink")
	defer flow.end(&err)
	ids, ok := s.Modules().IdentityStore()
	if !ok {
		return ErrFeatureDisabled
	}
	u, err := s.RecentUser(ctx, v)
	if err != nil {
		return err
	}
	keepOne := u.PasswordHash == ""
	if keepOne && s.users.passkeys != nil {
		keys, err := s.users.passkeys.ListPasskeys(ctx, u.ID)
		if err != nil {
			return fmt.Errorf("unlink: passkeys: %w", err)
		}
		keepOne = len(keys) == 0
	}
	list, err := ids.ListIdentities(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("unlink: %w", err)
	}
	i := slices.IndexFunc(list, func(id *user.Identity) bool { return id.ID == identityID })
	if i < 0 {
		return ErrIdentityNotFound
	}
	switch err := ids.DeleteIdentity(ctx, u.ID, identityID, keepOne); {
	case errors.Is(err, user.ErrNotFound):
		return ErrIdentityNotFound
	case errors.Is(err, user.ErrConflict):
		return ErrLastSignInMethod
	case err != nil:
		return fmt.Errorf("unlink: %w", err)
	}
	provider := list[i].Provider
	s.audit(ctx, v, Event{Type: EventIdentityUnlinked, UserID: u.ID, Detail: provider})
	s.Modules().Notify(ctx, v, mail.KindIdentityUnlinked, u, mail.Data{Provider: s.Modules().ProviderLabel(provider)})
	return nil
}

// LabelProvider records the label people read for the outside provider
// named name ("Google" for "google"), for the notices core mails about
// it. The social module calls it for each provider it is configured
// with.
func (m *Modules) LabelProvider(name, label string) {
	m.svc().labels.Store(name, label)
}

// ProviderLabel returns the label recorded for the provider named name,
// or name itself.
func (m *Modules) ProviderLabel(name string) string {
	if l, ok := m.svc().labels.Load(name); ok {
		return l.(string)
	}
	return name
}

// ClaimUnverified hands an account whose address was never verified to
// the person who has just proved that address outside core (a provider
// authoritative for it asserts it verified), after revoking everything
// set up before the proof: whoever registered the account may not own the
// address (account pre-hijacking), so the password is removed (the owner
// sets one with a reset), TOTP is turned off, every passkey is deleted
// (each audited and mailed), every session and trusted device ends, and
// the address is marked verified last. It audits
// EventUnverifiedSetupRevoked (Detail: method).
//
// It fails with ErrSocialLinkRequired, changing nothing, when u's address
// is not email or is verified already, when the store cannot remove a
// password (no user.PasswordChange), or when the password changed since u
// was read (a racing change: the caller asks the person to sign in
// instead). A failure after the password is gone leaves the account
// unverified and without it: the owner's next sign-in claims it again.
func (m *Modules) ClaimUnverified(ctx context.Context, v *Visit, u *user.User, email, method string) error {
	s := m.svc()
	if u.EmailVerified() || u.Email != email || s.users.change == nil {
		return ErrSocialLinkRequired
	}
	now := s.now()
	if u.PasswordHash != "" {
		// One conditional update: the hash read is still the stored one,
		// and raising the session version ends every session at once.
		err := s.users.change.ChangePassword(ctx, u.ID, u.PasswordHash, "", now)
		if errors.Is(err, user.ErrConflict) || errors.Is(err, user.ErrNotFound) {
			return ErrSocialLinkRequired
		}
		if err != nil {
			return fmt.Errorf("claim unverified: password: %w", err)
		}
	} else if s.users.versions != nil {
		if _, err := s.users.versions.BumpSessionVersion(ctx, u.ID); err != nil {
			return fmt.Errorf("claim unverified: sessions: %w", err)
		}
	}
	if u.TwoFactorEnabled && s.users.twoFactor != nil {
		if err := s.users.twoFactor.DisableTOTP(ctx, u.ID); err != nil && !errors.Is(err, user.ErrConflict) {
			return fmt.Errorf("claim unverified: 2fa: %w", err)
		}
	}
	s.revokePasskeys(ctx, v, u)
	s.revokeAPIKeys(ctx, v, u)
	if err := s.endOtherSessions(ctx, v, u.ID, false); err != nil {
		return fmt.Errorf("claim unverified: %w", err)
	}
	if err := s.users.verification.VerifyEmail(ctx, u.ID, email, now); err != nil {
		if errors.Is(err, user.ErrConflict) || errors.Is(err, user.ErrNotFound) {
			return ErrSocialLinkRequired // the address changed meanwhile
		}
		return fmt.Errorf("claim unverified: verify: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventUnverifiedSetupRevoked, UserID: u.ID, Detail: method})
	return nil
}

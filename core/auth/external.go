package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

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
	vd, err := s.check(ctx, v, s.lim.register, v.ClientIP())
	if err != nil {
		return nil, err
	}
	s.rateHeaders(v.header, vd)
	email, err := normalizeEmail(in.Email)
	if err != nil {
		return nil, err
	}
	reg := &Registration{Email: email, Name: name, Fields: map[string]string{}}
	if h := s.cfg.Hooks.BeforeRegister; h != nil {
		if err := s.runHook(ctx, "BeforeRegister", func() error { return h(ctx, reg) }); err != nil {
			return nil, err
		}
	}
	nu := &user.User{Email: email, Name: name}
	if in.EmailVerified {
		nu.EmailVerifiedAt = s.now()
	}
	u, err := s.users.registration.Create(ctx, nu)
	if err != nil {
		if errors.Is(err, user.ErrEmailTaken) {
			return nil, ErrEmailRegistered
		}
		return nil, fmt.Errorf("register external: create: %w", err)
	}
	if h := s.cfg.Hooks.AfterRegister; h != nil {
		if err := s.runHook(ctx, "AfterRegister", func() error { return h(ctx, u.Clone(), reg) }); err != nil {
			if derr := s.users.registration.Delete(context.WithoutCancel(ctx), u.ID); derr != nil {
				return nil, fmt.Errorf("register external: undo after %w: %w", err, derr)
			}
			return nil, err
		}
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

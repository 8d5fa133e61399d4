package authtest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// authkit's second step behind an app's own login
// (auth.Service.StartSecondStep): the suite's Service also serves a small
// app of its own, whose routes stand for an app that checked the password
// itself and hands authkit the user id (X-App-User), with authkit's
// session or, on /api/testapp/own/..., its own.

// The app's routes.
const (
	appLoginPath     = "/api/testapp/login"
	appOwnLoginPath  = "/api/testapp/own/login"
	appOwnVerifyPath = "/api/testapp/own/verify"
)

// appRoutes are the app's routes: a login that trusts X-App-User as the
// user its own check found, and the second step of a login with its own
// session, answering the verified user's id.
func appRoutes(svc *auth.Service) []auth.Route {
	login := func(own bool) auth.RouteFunc {
		return func(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
			res, err := svc.StartSecondStep(ctx, v, auth.SecondStepInput{UserID: r.Header("X-App-User"), OwnSession: own})
			if err != nil {
				return nil, err
			}
			return map[string]any{"requiresTwoFactor": res.RequiresTwoFactor, "appUser": res.User.ID}, nil
		}
	}
	verify := func(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
		res, err := svc.VerifyTwoFactor(ctx, v, auth.TwoFactorInput{Code: r.Header("X-Code")})
		if err != nil {
			return nil, err
		}
		return map[string]any{"appUser": res.User.ID}, nil
	}
	// Described like authkit's own routes, so that the OpenAPI drift test
	// holds them to their description too.
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	id := map[string]any{"type": "string"}
	cookies := []string{session.DefaultCookieName, auth.DeviceCookie, auth.PendingCookie, auth.TrustedDeviceCookie}
	loginOp := func(opID string) auth.Operation {
		return auth.Operation{ID: opID, Summary: "the flow suite's app: its own login, then authkit's second step",
			OK:         obj(map[string]any{"requiresTwoFactor": map[string]any{"type": "boolean"}, "appUser": id}, "requiresTwoFactor", "appUser"),
			SetCookies: cookies, Errors: []*auth.Error{auth.ErrUnknownUser, auth.ErrInvalidCredentials}, Hooks: "AfterLogin"}
	}
	return []auth.Route{
		auth.NewRoute(http.MethodPost, appLoginPath, login(false), loginOp("appLogin")),
		auth.NewRoute(http.MethodPost, appOwnLoginPath, login(true), loginOp("appOwnLogin")),
		auth.NewRoute(http.MethodPost, appOwnVerifyPath, verify, auth.Operation{ID: "appOwnVerify",
			Summary: "the flow suite's app: authkit's second step for an app with its own sessions", Auth: "pending",
			OK:         obj(map[string]any{"appUser": id}, "appUser"),
			SetCookies: cookies,
			Errors: []*auth.Error{auth.ErrNoPendingTwoFactor, auth.ErrTwoFactorExpired, auth.ErrInvalidSession, auth.ErrTooManyTwoFactor,
				auth.ErrInvalidTwoFactorCode, auth.ErrCodeUsed},
			Hooks: "AfterLogin"}),
	}
}

func (s suite) appEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	return s.envWithRoutes(t, appRoutes, opts...)
}

// finishSecondStep checks that r, the first step of ada@example.com's
// login in c, left a pending login and no session, and that the TOTP code
// of secret then signs c in.
func (e *env) finishSecondStep(t *testing.T, c *client, r *reply, secret string) {
	t.Helper()
	if r.setCookie(auth.PendingCookie) == nil {
		t.Fatalf("%s: no %s cookie", r, auth.PendingCookie)
	}
	mustBeSignedOut(t, c)
	e.nextStep()
	mustBody(t, c.verify(e.now(t, secret)), obj{"success": true})
	mustBeSignedIn(t, c, "ada@example.com")
}

// signedOutTwoFactor registers ada@example.com on a new browser, turns 2FA
// on and signs out: the browser, her record and her TOTP secret.
func (e *env) signedOutTwoFactor(t *testing.T) (*client, *user.User, string) {
	t.Helper()
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	secret, _ := e.enable2FA(t, c)
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	return c, u, secret
}

func (s suite) appStepNoTwoFactor(t *testing.T) {
	e := s.appEnv(t)
	u := e.seed(t, "ada@example.com")
	c := e.client()
	r := c.post(appLoginPath, nil, "X-App-User", u.ID)
	mustBody(t, r, obj{"requiresTwoFactor": false, "appUser": u.ID})
	mustBeSignedIn(t, c, "ada@example.com")
	if ev, ok := e.audit.Last(auth.EventLoginSucceeded); !ok || ev.UserID != u.ID || ev.Detail != string(auth.LoginApp) {
		t.Errorf("login_succeeded event %+v, want user %s detail %q", ev, u.ID, auth.LoginApp)
	}
}

func (s suite) appStepTwoFactor(t *testing.T) {
	e := s.appEnv(t, relaxed)
	c, u, secret := e.signedOutTwoFactor(t)
	r := c.post(appLoginPath, nil, "X-App-User", u.ID)
	mustBody(t, r, obj{"requiresTwoFactor": true, "appUser": u.ID})
	e.finishSecondStep(t, c, r, secret)
}

func (s suite) appStepOwnSession(t *testing.T) {
	e := s.appEnv(t, relaxed)
	c, u, secret := e.signedOutTwoFactor(t)
	mustBody(t, c.post(appOwnLoginPath, nil, "X-App-User", u.ID), obj{"requiresTwoFactor": true, "appUser": u.ID})
	e.nextStep()
	r := c.post(appOwnVerifyPath, nil, "X-Code", e.now(t, secret))
	mustBody(t, r, obj{"appUser": u.ID})
	if r.setCookie(sessionCookie) != nil {
		t.Errorf("%s: sets authkit's session cookie for an app with its own sessions", r)
	}
	if ck := r.setCookie(auth.PendingCookie); ck == nil || ck.MaxAge >= 0 {
		t.Errorf("%s: the pending cookie is not expired", r)
	}
	mustBeSignedOut(t, c)
	// The pending login is over: the code cannot finish it again.
	mustStatus(t, c.post(appOwnVerifyPath, nil, "X-Code", e.now(t, secret)), http.StatusUnauthorized, errNoPending2FA)

	// Without 2FA: the user at once, no authkit session.
	other := e.seed(t, "bob@example.com")
	b := e.client()
	r = b.post(appOwnLoginPath, nil, "X-App-User", other.ID)
	mustBody(t, r, obj{"requiresTwoFactor": false, "appUser": other.ID})
	if r.setCookie(sessionCookie) != nil {
		t.Errorf("%s: sets authkit's session cookie for an app with its own sessions", r)
	}
	mustBeSignedOut(t, b)
}

func (s suite) appStepOwnSessionLimited(t *testing.T) {
	e := s.appEnv(t)
	c, u, secret := e.signedOutTwoFactor(t)
	mustBody(t, c.post(appOwnLoginPath, nil, "X-App-User", u.ID), obj{"requiresTwoFactor": true, "appUser": u.ID})
	e.nextStep()
	begin := e.clock.Now()
	good := e.now(t, secret)
	for range 5 {
		mustStatus(t, c.post(appOwnVerifyPath, nil, "X-Code", otherCode(good)), http.StatusBadRequest, errInvalid2FACode)
	}
	e.mustLimited(t, c.post(appOwnVerifyPath, nil, "X-Code", good), msgTooMany2FA, begin.Add(5*time.Minute))
}

func (s suite) appStepUnknownUser(t *testing.T) {
	e := s.appEnv(t)
	c := e.client()
	mustStatus(t, c.post(appLoginPath, nil, "X-App-User", "no-such-user"), http.StatusUnauthorized, "Account not found")
	mustBeSignedOut(t, c)
}

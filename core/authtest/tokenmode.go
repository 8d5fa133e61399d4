package authtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
)

// Token mode (Config.Tokens): a mobile app's client, with no cookie jar,
// through every way a session starts, is used, renews and ends.

// tokenEnv is env in token mode, with routes (nil for none): its session
// records are the harness's (Harness.NewSessions) or the user store's;
// it skips the test when there are neither, as token mode needs records.
func (s suite) tokenEnv(t *testing.T, routes func(*auth.Service) []auth.Route) *env {
	t.Helper()
	return s.envWithRoutes(t, routes, func(c *auth.Config) {
		if s.h.NewSessions != nil {
			c.Sessions = s.h.NewSessions(t, c.Now)
		} else if _, ok := c.Users.(session.Provider); !ok {
			t.Skip("authtest: token mode needs session records: the harness has none (Harness.NewSessions) and its user store offers none")
		}
		TokenMode(c)
	})
}

// TokenMode is an option of NewService: Config.Tokens on, as
// CheckRequireUserWithTokens wants it.
func TokenMode(c *auth.Config) { c.Tokens.Enabled = true }

// CheckRequireUserWithTokens checks a route behind a framework module's
// RequireUser on a Service in token mode (NewService with TokenMode): a
// client without cookies gets 401 without a token and with a forged one
// (with RFC 6750's WWW-Authenticate challenge); registered as
// ada@example.com in token mode, 200 and exactly want with its access
// token as Authorization: Bearer; 401 again once it logged out with it.
func CheckRequireUserWithTokens(t testing.TB, base, path, want string) {
	t.Helper()
	c := &http.Client{} // no cookie jar
	WantError(t, Send(t, c, http.MethodGet, base+path, ""), http.StatusUnauthorized, errNotAuthenticated)
	forged := Send(t, c, http.MethodGet, base+path, "", "Authorization", "Bearer akat_"+strings.Repeat("A", 60))
	WantError(t, forged, http.StatusUnauthorized, errNotAuthenticated)
	if got := forged.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("forged token: WWW-Authenticate %q, want the invalid_token challenge", got)
	}
	r := Send(t, c, http.MethodPost, base+"/api/auth/register", unitRegister, "Content-Type", "application/json", auth.AuthModeHeader, "token")
	access, _ := r.JSON["accessToken"].(string)
	if r.Status != http.StatusOK || !strings.HasPrefix(access, "akat_") {
		t.Fatalf("register in token mode: %s; want 200 with an access token", r)
	}
	for _, line := range r.Header.Values("Set-Cookie") {
		if strings.Contains(line, "session=") || strings.HasPrefix(line, auth.PendingCookie+"=") {
			t.Errorf("register in token mode sets %q", line)
		}
	}
	bearer := []string{"Authorization", "Bearer " + access}
	if r := Send(t, c, http.MethodGet, base+path, "", bearer...); r.Status != http.StatusOK || r.Body != want {
		t.Errorf("with the access token: got %d %q, want 200 %q", r.Status, r.Body, want)
	}
	if r := Send(t, c, http.MethodPost, base+"/api/auth/logout", "", bearer...); r.Status != http.StatusOK {
		t.Fatalf("logout with the access token: %s", r)
	}
	WantError(t, Send(t, c, http.MethodGet, base+path, "", bearer...), http.StatusUnauthorized, errNotAuthenticated)
}

// appClient is a client without cookies that asks for token mode, as a
// mobile app's HTTP client does.
type appClient struct {
	*client
	access, refresh string
}

func (e *env) app() *appClient {
	c := e.client()
	c.hc.Jar = nil
	c.header.Set(auth.AuthModeHeader, "token")
	return &appClient{client: c}
}

// bearer is the Authorization header of the app's access token.
func (a *appClient) bearer() []string { return []string{"Authorization", "Bearer " + a.access} }

// keep takes the tokens of r, which must carry a pair and no cookie.
func (a *appClient) keep(t *testing.T, r *reply) {
	t.Helper()
	mustTokens(t, r)
	a.access, a.refresh = r.str("accessToken"), r.str("refreshToken")
}

// mustTokens checks that r carries a token pair and sets no session or
// pending cookie.
func mustTokens(t *testing.T, r *reply) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200", r, r.Status)
	}
	if !strings.HasPrefix(r.str("accessToken"), "akat_") || !strings.HasPrefix(r.str("refreshToken"), "akrt_") ||
		r.JSON["expiresIn"] != float64(900) || r.str("tokenType") != "Bearer" {
		t.Errorf("%s: want accessToken akat_..., refreshToken akrt_..., expiresIn 900, tokenType Bearer", r)
	}
	for _, name := range []string{sessionCookie, auth.PendingCookie} {
		if r.setCookie(name) != nil {
			t.Errorf("%s: sets the %s cookie in token mode", r, name)
		}
	}
}

func (a *appClient) me() *reply {
	a.t.Helper()
	return a.get("/api/auth/me", a.bearer()...)
}

func (a *appClient) refreshWith(tok string) *reply {
	a.t.Helper()
	return a.post("/api/auth/token/refresh", obj{"refreshToken": tok})
}

func (s suite) tokenLogin(t *testing.T) {
	e := s.tokenEnv(t, nil)
	e.seed(t, "ada@example.com")
	a := e.app()
	r := a.login("ada@example.com", goodPassword)
	a.keep(t, r)
	if r.JSON["success"] != true {
		t.Errorf("%s: want success true beside the tokens", r)
	}
	if me := a.me(); me.Status != http.StatusOK || me.str("email") != "ada@example.com" {
		t.Errorf("%s: want 200 for ada", me)
	}
	// Without the header the request has no session; a cookie-less
	// client that sends nothing is signed out.
	mustStatus(t, a.get("/api/auth/me"), http.StatusUnauthorized, errNotAuthenticated)
	bad := a.get("/api/auth/me", "Authorization", "Bearer akat_"+strings.Repeat("A", 40))
	mustStatus(t, bad, http.StatusUnauthorized, errNotAuthenticated)
	if got := bad.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("%s: WWW-Authenticate %q, want the RFC 6750 invalid_token challenge", bad, got)
	}
	// A browser on the same Service keeps its cookies.
	c := e.client()
	mustSessionCookie(t, c.login("ada@example.com", goodPassword), false, false)
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) tokenSecondStep(t *testing.T) {
	e := s.tokenEnv(t, nil)
	_, u, secret, _ := e.twoFactorUser(t)
	a := e.app()
	r := a.login("ada@example.com", goodPassword)
	pending := r.str("pendingToken")
	if r.Status != http.StatusOK || r.JSON["requiresTwoFactor"] != true || !strings.HasPrefix(pending, auth.PendingPrefix) || r.str("accessToken") != "" {
		t.Fatalf("%s: want requiresTwoFactor, a pendingToken akpt_... and no access token", r)
	}
	if r.setCookie(auth.PendingCookie) != nil {
		t.Errorf("%s: sets the pending cookie in token mode", r)
	}
	// The pending token is no session.
	mustStatus(t, a.get("/api/auth/me", "Authorization", "Bearer "+pending), http.StatusUnauthorized, errNotAuthenticated)
	e.nextStep()
	mustStatus(t, a.post("/api/2fa/verify", obj{"code": "000000"}), http.StatusUnauthorized, "No pending 2FA session")
	v := a.post("/api/2fa/verify", obj{"code": e.now(t, secret)}, "Authorization", "Bearer "+pending)
	a.keep(t, v)
	if me := a.me(); me.Status != http.StatusOK || me.str("id") != u.ID {
		t.Errorf("%s: want 200 for ada", me)
	}
}

func (s suite) tokenRefreshReuse(t *testing.T) {
	e := s.tokenEnv(t, nil)
	u := e.seed(t, "ada@example.com")
	a := e.app()
	a.keep(t, a.login("ada@example.com", goodPassword))
	first := a.refresh
	e.clock.Advance(16 * time.Minute) // the access token has expired
	mustStatus(t, a.me(), http.StatusUnauthorized, errNotAuthenticated)
	a.keep(t, a.refreshWith(first))
	if me := a.me(); me.Status != http.StatusOK {
		t.Fatalf("%s: the refreshed access token, want 200", me)
	}
	mails := e.mailCount(t)
	// The retired refresh token again: a copy. The session ends.
	mustStatus(t, a.refreshWith(first), http.StatusUnauthorized, "Invalid refresh token")
	mustStatus(t, a.me(), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, a.refreshWith(a.refresh), http.StatusUnauthorized, "Invalid refresh token")
	if n := e.audit.Count(auth.EventRefreshTokenReused, u.ID); n != 1 {
		t.Errorf("%d refresh_token_reused events for ada, want 1", n)
	}
	if got := e.mailCount(t); got != mails {
		t.Errorf("%d mails after the reuse, want %d (none)", got, mails)
	}
	// Bad input changes nothing.
	b := e.app()
	b.keep(t, b.login("ada@example.com", goodPassword))
	mustStatus(t, b.post("/api/auth/token/refresh", obj{}), http.StatusBadRequest, "Refresh token is required")
	mustStatus(t, b.post("/api/auth/token/refresh", obj{"refreshToken": 42}), http.StatusBadRequest, "refreshToken must be a string")
	mustStatus(t, b.refreshWith(b.access), http.StatusUnauthorized, "Invalid refresh token")
	mustStatus(t, b.refreshWith("akrt_"+strings.Repeat("x", 60)), http.StatusUnauthorized, "Invalid refresh token")
	b.keep(t, b.refreshWith(b.refresh))
}

func (s suite) tokenRefreshRace(t *testing.T) {
	e := s.tokenEnv(t, nil)
	e.seed(t, "ada@example.com")
	a := e.app()
	a.keep(t, a.login("ada@example.com", goodPassword))
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range n {
		wg.Go(func() {
			r, err := a.try(http.MethodPost, "/api/auth/token/refresh", "application/json", []byte(`{"refreshToken":"`+a.refresh+`"}`))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("refresh: %v", err)
				return
			}
			statuses[r.Status]++
		})
	}
	wg.Wait()
	if statuses[http.StatusOK] != 1 || statuses[http.StatusUnauthorized] != n-1 {
		t.Fatalf("statuses %v: want exactly one 200 and %d 401", statuses, n-1)
	}
}

func (s suite) tokenSessionEnds(t *testing.T) {
	e := s.tokenEnv(t, nil)
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	a := e.app()
	a.keep(t, a.login("ada@example.com", goodPassword))
	list := c.get("/api/auth/sessions")
	if sessions, _ := list.JSON["sessions"].([]any); len(sessions) != 2 {
		t.Fatalf("%s: want the browser's and the app's session", list)
	}
	mustMessage(t, a.post("/api/auth/logout", nil, a.bearer()...), "Logged out")
	mustStatus(t, a.me(), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, a.refreshWith(a.refresh), http.StatusUnauthorized, "Invalid refresh token")
	mustBeSignedIn(t, c, "ada@example.com")

	// A password reset ends every session, the app's included.
	a.keep(t, a.login("ada@example.com", goodPassword))
	tok := e.resetToken(t, "ada@example.com")
	mustMessage(t, e.client().post("/api/auth/reset-password/"+tok, obj{"password": newPassword, "confirmPassword": newPassword}), msgPasswordReset)
	mustStatus(t, a.me(), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, a.refreshWith(a.refresh), http.StatusUnauthorized, "Invalid refresh token")
}

func (s suite) tokenChangeRenews(t *testing.T) {
	e := s.tokenEnv(t, nil)
	e.seed(t, "ada@example.com")
	other := e.app()
	other.keep(t, other.login("ada@example.com", goodPassword))
	a := e.app()
	a.keep(t, a.login("ada@example.com", goodPassword))
	old := a.refresh
	r := a.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}, a.bearer()...)
	a.keep(t, r) // the renewed session, handed out again
	if me := a.me(); me.Status != http.StatusOK {
		t.Errorf("%s: the renewed access token, want 200", me)
	}
	mustStatus(t, other.me(), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, other.refreshWith(other.refresh), http.StatusUnauthorized, "Invalid refresh token")
	// The refresh token from before the change was retired by it.
	mustStatus(t, a.refreshWith(old), http.StatusUnauthorized, "Invalid refresh token")
	e.flush(t)
	if n := len(e.mails(t, "ada@example.com", mail.KindPasswordChanged)); n != 1 {
		t.Errorf("%d password-changed notices, want 1", n)
	}
}

func (s suite) tokenCrossOrigin(t *testing.T) {
	e := s.tokenEnv(t, nil)
	e.seed(t, "ada@example.com")
	cross := []string{"Origin", "https://elsewhere.example", "Sec-Fetch-Site", "cross-site"}
	// No cookie: nothing a browser adds by itself, so no check.
	a := e.app()
	a.keep(t, a.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword}, cross...))
	// A cookie keeps the check, token mode or not.
	c := e.loggedIn(t, "ada@example.com")
	c.header.Set(auth.AuthModeHeader, "token")
	r := c.post("/api/auth/logout", nil, cross...)
	if r.Status != http.StatusForbidden {
		t.Errorf("%s: a cross-origin request with cookies in token mode: want 403", r)
	}
}

// tokensOff: without Config.Tokens the header and bearer tokens change
// nothing and the refresh route does not exist.
func (s suite) tokensOff(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	a := e.app()
	r := a.login("ada@example.com", goodPassword)
	mustSessionCookie(t, r, false, false)
	if r.str("accessToken") != "" {
		t.Errorf("%s: tokens without Config.Tokens", r)
	}
	mustStatus(t, a.post("/api/auth/token/refresh", obj{"refreshToken": "akrt_x"}), http.StatusNotFound, "Not found")
}

// handOffPath is the flow suite app's browser flow for a native app: a
// password sign-in in token mode whose result is handed off to the app's
// redirect (as the social module's start with appRedirect does).
const handOffPath = "/api/testapp/hand-off"

// appRedirect is the native app's redirect in the flow suite.
const appRedirect = "com.example.app:/signed-in"

func handOffRoutes(svc *auth.Service) []auth.Route {
	flow := func(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
		if err := svc.Modules().TokenVisit(v); err != nil {
			return nil, err
		}
		if _, err := svc.Login(ctx, v, auth.LoginInput{Email: r.Header("X-Email"), Password: r.Header("X-Password")}); err != nil {
			return nil, err
		}
		code, err := svc.Modules().HandOff(ctx, v, r.Header("X-Code-Challenge"))
		if err != nil {
			return nil, err
		}
		return auth.Redirect{Status: http.StatusSeeOther, Location: appRedirect + "?code=" + url.QueryEscape(code)}, nil
	}
	return []auth.Route{auth.NewRoute(http.MethodPost, handOffPath, flow, auth.Operation{ID: "appHandOff",
		Summary:  "the flow suite's app: a browser sign-in handed off to a native app",
		Redirect: http.StatusSeeOther, SetCookies: []string{auth.DeviceCookie},
		Errors: []*auth.Error{auth.ErrInvalidCredentials}, Hooks: "AfterLogin"})}
}

// handOff signs email in through the hand-off flow with the challenge of
// verifier and returns the code the app's redirect carries.
func (e *env) handOff(t *testing.T, email, verifier string) string {
	t.Helper()
	c := e.client()
	c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	sum := sha256.Sum256([]byte(verifier))
	r, err := c.try(http.MethodPost, handOffPath, "", nil, "X-Email", email, "X-Password", goodPassword,
		"X-Code-Challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := url.Parse(r.Header.Get("Location"))
	if r.Status != http.StatusSeeOther || loc == nil || !strings.HasPrefix(loc.String(), appRedirect+"?code=") {
		t.Fatalf("%s: want 303 to %s?code=...", r, appRedirect)
	}
	if r.setCookie(sessionCookie) != nil || r.setCookie(auth.PendingCookie) != nil {
		t.Errorf("%s: the browser got the app's session or pending cookie", r)
	}
	return loc.Query().Get("code")
}

const handOffVerifier = "the-app's-own-verifier-0123456789-0123456789-abc"

func (s suite) tokenHandOff(t *testing.T) {
	e := s.tokenEnv(t, handOffRoutes)
	e.seed(t, "ada@example.com")
	a := e.app()
	exchange := func(code, verifier string) *reply {
		return a.post("/api/auth/token/exchange", obj{"code": code, "codeVerifier": verifier})
	}
	code := e.handOff(t, "ada@example.com", handOffVerifier)
	a.keep(t, exchange(code, handOffVerifier))
	if me := a.me(); me.Status != http.StatusOK || me.str("email") != "ada@example.com" {
		t.Errorf("%s: the exchanged access token, want 200 for ada", me)
	}
	mustStatus(t, exchange(code, handOffVerifier), http.StatusBadRequest, "Invalid or expired code")
	// An interceptor of the redirect lacks the verifier: its try spends
	// the code.
	code = e.handOff(t, "ada@example.com", handOffVerifier)
	mustStatus(t, exchange(code, "an-interceptor's-guess-0123456789-0123456789-x"), http.StatusBadRequest, "Invalid or expired code")
	mustStatus(t, exchange(code, handOffVerifier), http.StatusBadRequest, "Invalid or expired code")
	mustStatus(t, a.post("/api/auth/token/exchange", obj{"code": "x"}), http.StatusBadRequest, "Code and code verifier are required")
}

func (s suite) tokenHandOffSecondStep(t *testing.T) {
	e := s.tokenEnv(t, handOffRoutes)
	_, _, secret, _ := e.twoFactorUser(t)
	a := e.app()
	code := e.handOff(t, "ada@example.com", handOffVerifier)
	r := a.post("/api/auth/token/exchange", obj{"code": code, "codeVerifier": handOffVerifier})
	pending := r.str("pendingToken")
	if r.Status != http.StatusOK || r.JSON["requiresTwoFactor"] != true || !strings.HasPrefix(pending, auth.PendingPrefix) {
		t.Fatalf("%s: want requiresTwoFactor and a pending token", r)
	}
	e.nextStep()
	a.keep(t, a.post("/api/2fa/verify", obj{"code": e.now(t, secret)}, "Authorization", "Bearer "+pending))
	if me := a.me(); me.Status != http.StatusOK {
		t.Errorf("%s: want 200", me)
	}
}

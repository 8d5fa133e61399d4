package socialtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/social"
)

const start = social.Prefix + "/test/start"

// all makes the test provider authoritative for every address.
var all = []string{"*"}

func loginError(code string) string { return "/login?error=" + code }

// signUpOnFirstSignIn: a provider account without a local one, whose
// address the provider asserts verified and is authoritative for, makes
// an account without a password, its address verified, linked, signed in.
func signUpOnFirstSignIn(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name          string
		authoritative []string
	}{{"for the domain", []string{"example.com"}}, {"for every domain", []string{"*"}}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, h, options{authoritative: tc.authoritative})
			b := e.browser()
			wantRedirect(t, b.signIn(alice), http.StatusSeeOther, "/")
			status, id := b.me()
			if status != http.StatusOK {
				t.Fatalf("GET /api/auth/me after the sign-up: %d, want 200", status)
			}
			u, err := e.users.ByEmail(context.Background(), alice.Email)
			if err != nil {
				t.Fatal(err)
			}
			if u.ID != id || u.PasswordHash != "" || u.Name != "Alice Liddell" || !u.EmailVerified() {
				t.Fatalf("the account: %+v (verified %v), want alice's, no password, verified", u, u.EmailVerified())
			}
			ids := e.identities(u.ID)
			if len(ids) != 1 || ids[0].Provider != "test" || ids[0].Subject != alice.ID || ids[0].Email != alice.Email {
				t.Fatalf("identities %+v, want test/%s", ids, alice.ID)
			}
			_ = e.svc.FlushMail(context.Background())
			if slices.ContainsFunc(e.mail.To(alice.Email), func(m mail.Message) bool { return m.Kind == mail.KindVerifyEmail }) {
				t.Fatal("a verification mail was sent for a verified address")
			}
			if len(e.audit.Of(auth.EventRegistered)) != 1 || len(e.audit.Of(auth.EventIdentityLinked)) != 1 || len(e.audit.Of(auth.EventLoginSucceeded)) != 1 {
				t.Fatalf("events: %+v", e.audit.Events())
			}
			// The account was made for this identity: no "linked" notice.
			e.wantNotice(mail.KindIdentityLinked, alice.Email, 0)
		})
	}
}

// noSignUpOnUntrustedClaim: without an account, a provider that is not
// authoritative for the address makes none (a pre-hijacked account would
// wait for its real owner).
func noSignUpOnUntrustedClaim(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: []string{"example.org"}})
	b := e.browser()
	wantRedirect(t, b.signIn(alice), http.StatusSeeOther, loginError("social_email_unverified"))
	if status, _ := b.me(); status != http.StatusUnauthorized || e.userCount() != 0 {
		t.Fatalf("me %d, %d accounts; want 401 and none", status, e.userCount())
	}
}

// signInAgain: the second sign-in of a linked account signs into it,
// from another browser, and makes nothing new.
func signInAgain(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: []string{"*"}})
	wantRedirect(t, e.browser().signIn(alice), http.StatusSeeOther, "/")
	first, _ := e.users.ByEmail(context.Background(), alice.Email)
	b := e.browser()
	wantRedirect(t, b.signIn(alice), http.StatusSeeOther, "/")
	if status, id := b.me(); status != http.StatusOK || id != first.ID {
		t.Fatalf("me: %d %q, want 200 %q", status, id, first.ID)
	}
	if n := len(e.identities(first.ID)); n != 1 || len(e.audit.Of(auth.EventRegistered)) != 1 {
		t.Fatalf("%d identities, %d registrations; want 1 and 1", n, len(e.audit.Of(auth.EventRegistered)))
	}
}

// returnTo: a path of the app is where the callback lands; another
// origin in any spelling is ignored.
func returnTo(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	for returnTo, want := range map[string]string{
		"/settings?tab=security": "/settings?tab=security",
		"//evil.example/x":       "/",
		"https://evil.example/":  "/",
		`/\evil.example`:         "/",
		"evil":                   "/",
		"/ok\x00":                "/",
	} {
		b := e.browser()
		cb := b.signInAt(start+"?returnTo="+url.QueryEscape(returnTo), alice)
		wantRedirect(t, b.get(cb), http.StatusSeeOther, want)
	}
}

// linkByVerifiedEmail: an account whose verified address the provider
// asserts verified, and for which it is authoritative, is linked and
// signed into.
func linkByVerifiedEmail(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: []string{"example.com"}})
	local := e.local(alice.Email, true)
	b := e.browser()
	wantRedirect(t, b.signIn(alice), http.StatusSeeOther, "/")
	if status, id := b.me(); status != http.StatusOK || id != local.ID {
		t.Fatalf("me: %d %q, want 200 %q", status, id, local.ID)
	}
	if ids := e.identities(local.ID); len(ids) != 1 || ids[0].Subject != alice.ID {
		t.Fatalf("identities %+v", ids)
	}
	if ev := e.audit.Of(auth.EventIdentityLinked); len(ev) != 1 || ev[0].Detail != "test (email)" {
		t.Fatalf("identity_linked events %+v", ev)
	}
	e.wantNotice(mail.KindIdentityLinked, alice.Email, 1)
}

// noTakeover: a provider account that only claims an address of an
// existing account never gets into it: an unverified claim, a provider
// not authoritative for the address. Nothing is linked or created, and
// the browser is not signed in. (A local address never verified, proved
// by an authoritative provider: claimUnverified.)
func noTakeover(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name          string
		as            account
		authoritative []string
		localVerified bool
		code          auth.Code
	}{
		{"unverified email claim", mallory, []string{"*"}, true, "social_email_unverified"},
		{"provider not authoritative", eve, nil, true, "social_link_required"},
		{"provider authoritative for another domain", eve, []string{"example.org"}, true, "social_link_required"},
		{"unverified claim on an unverified local address", mallory, []string{"*"}, false, "social_email_unverified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, h, options{authoritative: tc.authoritative})
			victim := e.local("victim@example.com", tc.localVerified)
			b := e.browser()
			wantRedirect(t, b.signIn(tc.as), http.StatusSeeOther, loginError(string(tc.code)))
			if status, _ := b.me(); status != http.StatusUnauthorized {
				t.Fatalf("me after a refused sign-in: %d, want 401", status)
			}
			if ids := e.identities(victim.ID); len(ids) != 0 {
				t.Fatalf("the victim's account got identities %+v", ids)
			}
			if _, err := e.users.IdentityBySubject(context.Background(), "test", tc.as.ID); err == nil {
				t.Fatal("the attacker's provider account was linked")
			}
			if len(e.audit.Of(auth.EventLoginSucceeded)) != 0 {
				t.Fatal("a login succeeded")
			}
		})
	}
}

// twoFactorAccount: a social sign-in into an account with 2FA ends at
// the second step: the 2fa_pending cookie, no session.
func twoFactorAccount(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: []string{"example.com"}})
	local := e.local(alice.Email, true)
	ctx := context.Background()
	if err := e.users.BeginTOTPSetup(ctx, local.ID, "pending"); err != nil {
		t.Fatal(err)
	}
	if err := e.users.EnableTOTP(ctx, local.ID, user.EnableTOTP{Pending: "pending", Secret: "secret", Step: 1}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	resp := b.signIn(alice)
	wantRedirect(t, resp, http.StatusSeeOther, "/2fa")
	if !slices.ContainsFunc(resp.Cookies(), func(c *http.Cookie) bool { return c.Name == auth.PendingCookie && c.Value != "" }) {
		t.Fatalf("no %s cookie: %v", auth.PendingCookie, resp.Cookies())
	}
	if status, _ := b.me(); status != http.StatusUnauthorized {
		t.Fatalf("me before the second step: %d, want 401", status)
	}
	if len(e.audit.Of(auth.EventLoginPending)) != 1 || len(e.audit.Of(auth.EventLoginSucceeded)) != 0 {
		t.Fatalf("events %+v", e.audit.Events())
	}
}

// tamperedState: a callback whose state is not the browser's, or
// without the browser's cookie, is refused and changes nothing.
func tamperedState(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	b := e.browser()
	cb := b.signInAt(start, alice)
	u, _ := url.Parse(cb)
	q := u.Query()
	q.Set("state", q.Get("state")+"x")
	u.RawQuery = q.Encode()
	wantRedirect(t, b.get(u.String()), http.StatusSeeOther, loginError("social_state_invalid"))

	other := e.browser() // the right state, another browser (login CSRF)
	cb = b.signInAt(start, alice)
	wantRedirect(t, other.get(cb), http.StatusSeeOther, loginError("social_state_invalid"))
	if e.userCount() != 0 {
		t.Fatal("an account was created")
	}
}

// replayedCallback: a callback, its cookie included, works once; the
// same again (a replayed code, a second callback with the same state)
// is refused and changes nothing.
func replayedCallback(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	b := e.browser()
	cb := b.signInAt(start, alice)
	app, _ := url.Parse(e.app.URL + social.Prefix)
	thief := e.browser()
	thief.c.Jar.SetCookies(app, b.c.Jar.Cookies(app)) // the cookie, copied before the callback
	wantRedirect(t, b.get(cb), http.StatusSeeOther, "/")
	wantRedirect(t, thief.get(cb), http.StatusSeeOther, loginError("social_state_invalid"))
	if status, _ := thief.me(); status != http.StatusUnauthorized {
		t.Fatalf("the replay signed in: %d", status)
	}
	if len(e.audit.Of(auth.EventLoginSucceeded)) != 1 {
		t.Fatalf("%d logins, want 1", len(e.audit.Of(auth.EventLoginSucceeded)))
	}
}

// issuerMismatch: an iss parameter (RFC 9207) that is not the
// provider's issuer refuses the callback.
func issuerMismatch(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	b := e.browser()
	cb := b.signInAt(start, alice)
	wantRedirect(t, b.get(cb+"&iss="+url.QueryEscape("https://evil.example/")), http.StatusSeeOther, loginError("social_failed"))
	if e.userCount() != 0 {
		t.Fatal("an account was created")
	}
}

// providerError: the provider's error answer (the user declined) is
// social_failed.
func providerError(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	b := e.browser()
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp := b.get(start)
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), e.issuer) {
		t.Fatalf("start: %d to %q, want 302 to the provider", resp.StatusCode, resp.Header.Get("Location"))
	}
	to, _ := url.Parse(resp.Header.Get("Location"))
	q := to.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("redirect_uri") != e.callback {
		t.Fatalf("the authorization URL lacks PKCE S256, a nonce or the exact redirect URI: %s", to)
	}
	wantRedirect(t, b.get(e.callback+"?error=access_denied&state="+url.QueryEscape(q.Get("state"))), http.StatusSeeOther, loginError("social_failed"))
}

// providerDown: a provider that does not answer at start or at the
// callback gives social_provider_unavailable, never a 5xx, and nothing
// changes.
func providerDown(t *testing.T, h Harness) {
	t.Run("at start", func(t *testing.T) {
		e := newEnv(t, h, options{authoritative: all})
		e.stop()
		b := e.browser()
		wantRedirect(t, b.get(start), http.StatusSeeOther, loginError("social_provider_unavailable"))
	})
	t.Run("at the callback", func(t *testing.T) {
		e := newEnv(t, h, options{authoritative: all})
		b := e.browser()
		cb := b.signInAt(start, alice)
		e.stop()
		wantRedirect(t, b.get(cb), http.StatusSeeOther, loginError("social_provider_unavailable"))
		if e.userCount() != 0 {
			t.Fatal("an account was created")
		}
	})
}

// signUpClosed: without public sign-up, a provider account with no
// local one is refused; existing accounts still sign in.
func signUpClosed(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: []string{"example.com"}, core: func(c *auth.Config) { c.Disable = []auth.Feature{auth.FeatureRegistration} }})
	wantRedirect(t, e.browser().signIn(bob), http.StatusSeeOther, loginError("social_signup_closed"))
	if e.userCount() != 0 {
		t.Fatal("an account was created")
	}
	e.local(alice.Email, true)
	wantRedirect(t, e.browser().signIn(alice), http.StatusSeeOther, "/")
}

// unknownProvider: a provider that is not configured.
func unknownProvider(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	wantRedirect(t, e.browser().get(social.Prefix+"/nope/start"), http.StatusSeeOther, loginError("social_provider_unknown"))
}

type identitiesBody struct {
	Identities []struct {
		ID, Provider, Email, CreatedAt string
	} `json:"identities"`
}

func (b *browser) list() identitiesBody {
	b.t.Helper()
	resp := b.get("/api/auth/identities")
	var body identitiesBody
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET /api/auth/identities: %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		b.t.Fatal(err)
	}
	return body
}

func wantJSON(t *testing.T, resp *http.Response, status int, field, want string) {
	t.Helper()
	var body map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &body)
	if resp.StatusCode != status || body[field] != want {
		t.Fatalf("%s %s: %d %s, want %d with %s %q", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, raw, status, field, want)
	}
}

// linkListUnlink: a signed-in user links a second provider account,
// lists both, unlinks one; the last way to sign in cannot be unlinked;
// another user's identity is not found.
func linkListUnlink(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	b := e.browser()
	wantRedirect(t, b.signIn(alice), http.StatusSeeOther, "/")
	first := b.list()
	if len(first.Identities) != 1 || first.Identities[0].Provider != "test" || first.Identities[0].Email != alice.Email || first.Identities[0].CreatedAt == "" {
		t.Fatalf("identities %+v", first)
	}
	wantJSON(t, b.do(http.MethodDelete, "/api/auth/identities/"+first.Identities[0].ID, nil), http.StatusBadRequest, "code", "last_sign_in_method")

	// Link bob's provider account to alice's account.
	page := b.do(http.MethodPost, social.Prefix+"/test/link?returnTo=/settings", nil)
	if page.StatusCode != http.StatusOK || page.Request.URL.Host == b.app.Host {
		t.Fatalf("POST link ended at %s with %d", page.Request.URL, page.StatusCode)
	}
	id := page.Request.URL.Query().Get("authRequestID")
	login := *page.Request.URL
	login.RawQuery = ""
	cb := b.do(http.MethodPost, login.String(), url.Values{"username": {bob.Username}, "password": {bob.Password}, "id": {id}}).Header.Get("Location")
	wantRedirect(t, b.get(cb), http.StatusSeeOther, "/settings")
	both := b.list()
	if len(both.Identities) != 2 || both.Identities[1].Email != bob.Email {
		t.Fatalf("after the link: %+v", both)
	}
	if _, err := e.users.ByEmail(context.Background(), bob.Email); err == nil {
		t.Fatal("the link made an account for bob")
	}
	e.wantNotice(mail.KindIdentityLinked, alice.Email, 1) // to the account's address, not bob's
	e.wantNotice(mail.KindIdentityLinked, bob.Email, 0)
	if ev := e.audit.Of(auth.EventIdentityLinked); len(ev) != 2 || ev[1].Detail != "test (signed in)" {
		t.Fatalf("identity_linked events %+v", ev)
	}

	other := e.browser() // another user's identity is none of alice's
	wantRedirect(t, other.signIn(mallory), http.StatusSeeOther, loginError("social_email_unverified"))
	wantJSON(t, b.do(http.MethodDelete, "/api/auth/identities/no-such-id", nil), http.StatusNotFound, "code", "identity_not_found")

	wantJSON(t, b.do(http.MethodDelete, "/api/auth/identities/"+first.Identities[0].ID, nil), http.StatusOK, "message", "Account unlinked")
	left := b.list()
	if len(left.Identities) != 1 || left.Identities[0].Email != bob.Email {
		t.Fatalf("after the unlink: %+v", left)
	}
	wantJSON(t, b.do(http.MethodDelete, "/api/auth/identities/"+left.Identities[0].ID, nil), http.StatusBadRequest, "code", "last_sign_in_method")
	if ev := e.audit.Of(auth.EventIdentityUnlinked); len(ev) != 1 || ev[0].Detail != "test" {
		t.Fatalf("identity_unlinked events %+v", ev)
	}
	e.wantNotice(mail.KindIdentityUnlinked, alice.Email, 1) // the refused unlink mailed nothing
	// alice's provider account is free: it signs up anew.
	wantRedirect(t, e.browser().signIn(alice), http.StatusSeeOther, "/")
}

// linkTaken: a provider account linked to one user cannot be linked
// to another.
func linkTaken(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	wantRedirect(t, e.browser().signIn(bob), http.StatusSeeOther, "/") // bob's account holds bob's identity
	b := e.browser()
	wantRedirect(t, b.signIn(alice), http.StatusSeeOther, "/")
	_, aliceID := b.me()
	page := b.do(http.MethodPost, social.Prefix+"/test/link", nil)
	id := page.Request.URL.Query().Get("authRequestID")
	login := *page.Request.URL
	login.RawQuery = ""
	cb := b.do(http.MethodPost, login.String(), url.Values{"username": {bob.Username}, "password": {bob.Password}, "id": {id}}).Header.Get("Location")
	wantRedirect(t, b.get(cb), http.StatusSeeOther, loginError("social_identity_taken"))
	if n := len(e.identities(aliceID)); n != 1 {
		t.Fatalf("alice has %d identities, want 1", n)
	}
}

// linkNeedsSession: linking without a session is refused as JSON.
func linkNeedsSession(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: all})
	wantJSON(t, e.browser().do(http.MethodPost, social.Prefix+"/test/link", nil), http.StatusUnauthorized, "code", "not_authenticated")
}

// claimUnverified: an account registered with the owner's address but
// never verified (an attacker's, waiting for the owner: account
// pre-hijacking) is the owner's once they prove the address through a
// provider authoritative for it; what the registrant set up stops
// working: the password is gone (their login fails), their session
// ends, their passkey is deleted, their TOTP is off (the owner lands
// signed in, not at a second step they cannot take). The account is verified and linked,
// and the owner is signed into it.
func claimUnverified(t *testing.T, h Harness) {
	e := newEnv(t, h, options{authoritative: []string{"example.com"}})
	ctx := context.Background()
	local := e.local(alice.Email, false)
	attacker := e.browser()
	login := url.Values{"email": {alice.Email}, "password": {"local password 1"}}
	if resp := attacker.do(http.MethodPost, "/api/auth/login", login); resp.StatusCode != http.StatusOK {
		t.Fatalf("the registrant's login: %d", resp.StatusCode)
	}
	if err := e.users.AddPasskey(ctx, &user.Passkey{ID: []byte("registrant-key"), UserID: local.ID, UserHandle: []byte("h"), PublicKey: []byte("k"), Name: "Registrant's key", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := e.users.BeginTOTPSetup(ctx, local.ID, "pending"); err != nil { // the registrant's TOTP
		t.Fatal(err)
	}
	if err := e.users.EnableTOTP(ctx, local.ID, user.EnableTOTP{Pending: "pending", Secret: "secret", Step: 1}); err != nil {
		t.Fatal(err)
	}

	owner := e.browser()
	wantRedirect(t, owner.signIn(alice), http.StatusSeeOther, "/")
	if status, id := owner.me(); status != http.StatusOK || id != local.ID {
		t.Fatalf("the owner's me: %d %q, want 200 %q", status, id, local.ID)
	}
	if status, _ := attacker.me(); status != http.StatusUnauthorized {
		t.Fatalf("the registrant's session after the claim: %d, want 401", status)
	}
	if resp := attacker.do(http.MethodPost, "/api/auth/login", login); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the registrant's password after the claim: %d, want 401", resp.StatusCode)
	}
	u, err := e.users.ByID(ctx, local.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.PasswordHash != "" || !u.EmailVerified() || u.TwoFactorEnabled || u.TOTPSecret != "" {
		t.Fatalf("the account after the claim: password %q, verified %v, 2FA %v", u.PasswordHash, u.EmailVerified(), u.TwoFactorEnabled)
	}
	if keys, err := e.users.ListPasskeys(ctx, local.ID); err != nil || len(keys) != 0 {
		t.Fatalf("passkeys after the claim: %+v %v", keys, err)
	}
	if ids := e.identities(local.ID); len(ids) != 1 || ids[0].Subject != alice.ID {
		t.Fatalf("identities %+v", ids)
	}
	if ev := e.audit.Of(auth.EventUnverifiedSetupRevoked); len(ev) != 1 || ev[0].UserID != local.ID || ev[0].Detail != "social" {
		t.Fatalf("unverified_setup_revoked events %+v", ev)
	}
	if ev := e.audit.Of(auth.EventIdentityLinked); len(ev) != 1 || ev[0].Detail != "test (claimed)" {
		t.Fatalf("identity_linked events %+v", ev)
	}
}

// nativeApp: a native app's sign-in (appRedirect and a PKCE challenge at
// the start) ends at the app's redirect with a one-time code instead of a
// signed-in browser; the app exchanges it with its verifier, once, for
// tokens. An appRedirect that is not configured goes nowhere but the
// login page.
func nativeApp(t *testing.T, h Harness) {
	const redirect = "com.example.app:/signed-in"
	const verifier = "the-app's-verifier-0123456789-0123456789-0123456789"
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	e := newEnv(t, h, options{authoritative: []string{"example.com"}, appRedirects: []string{redirect},
		core: func(c *auth.Config) { c.Tokens.Enabled = true }})
	b := e.browser()
	start := social.Prefix + "/test/start?" + url.Values{"appRedirect": {redirect}, "codeChallenge": {challenge}}.Encode()
	resp := b.get(b.signInAt(start, alice))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc == nil || !strings.HasPrefix(loc.String(), redirect+"?code=") {
		t.Fatalf("callback: %d to %q, want 303 to %s?code=...", resp.StatusCode, resp.Header.Get("Location"), redirect)
	}
	if status, _ := b.me(); status != http.StatusUnauthorized {
		t.Fatalf("the browser after a native app's sign-in: me %d, want 401 (the app holds the session)", status)
	}
	exchange := func(code, verifier string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]string{"code": code, "codeVerifier": verifier})
		r, err := http.Post(e.app.URL+"/api/auth/token/exchange", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Body.Close() }()
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		return r.StatusCode, m
	}
	code := loc.Query().Get("code")
	status, tokens := exchange(code, verifier)
	access, _ := tokens["accessToken"].(string)
	if status != http.StatusOK || !strings.HasPrefix(access, "akat_") {
		t.Fatalf("exchange: %d %v, want 200 with tokens", status, tokens)
	}
	req, _ := http.NewRequest(http.MethodGet, e.app.URL+"/api/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+access)
	me, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = me.Body.Close()
	if me.StatusCode != http.StatusOK {
		t.Fatalf("me with the exchanged access token: %d, want 200", me.StatusCode)
	}
	if status, body := exchange(code, verifier); status != http.StatusBadRequest || body["code"] != "invalid_hand_off" {
		t.Fatalf("a second exchange: %d %v, want 400 invalid_hand_off", status, body)
	}
	// A redirect the app did not configure: the login page, nothing kept.
	for _, q := range []url.Values{
		{"appRedirect": {"https://evil.example/steal"}, "codeChallenge": {challenge}},
		{"appRedirect": {redirect}, "codeChallenge": {"plain"}},
	} {
		resp := b.get(social.Prefix + "/test/start?" + q.Encode())
		wantRedirect(t, resp, http.StatusSeeOther, loginError("social_app_redirect_invalid"))
	}
}

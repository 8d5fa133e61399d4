package passkeystest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
)

// Harness is what a framework integration (or an app) hands Run.
type Harness struct {
	// Start serves svc's routes through the framework under test (pk,
	// made by passkeys.New, added the passkey routes to them), on
	// 127.0.0.1:0, and returns the base URL
	// ("http://127.0.0.1:PORT"). It registers the server's shutdown with
	// t.Cleanup. Required.
	Start func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string

	// NewUsers returns a fresh, empty user store for one test; it must
	// implement user.Passkeys as well (the suite fails the test
	// otherwise). Required.
	NewUsers func(t *testing.T) user.Store
}

// RPID and Origin are the relying party of every Handler the suite
// builds: the Authenticator signs for RPID on a page of Origin. The
// requests themselves go to the harness's base URL, marked same-origin
// (Sec-Fetch-Site), as a browser on the site's own page marks them.
const (
	RPID   = "localhost"
	Origin = "http://localhost"
)

// password is the password of every account the suite registers.
const password = "correct horse battery staple"

// start is the instant every subtest's clock starts at.
var start = time.Date(2031, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

// Run runs the passkey flow suite against h: one parallel subtest per
// behaviour, each on a fresh Service, user store, Handler and server.
func Run(t *testing.T, h Harness) {
	if h.Start == nil || h.NewUsers == nil {
		t.Fatal("passkeystest: Harness.Start and Harness.NewUsers are required")
	}
	for _, topic := range topics {
		t.Run(topic.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range topic.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.run(t, h)
				})
			}
		})
	}
}

// test is one behaviour: a name that says what it checks, and the check.
type test struct {
	name string
	run  func(t *testing.T, h Harness)
}

var topics = []struct {
	name  string
	tests []test
}{
	{"Register", []test{
		{"StoresThePasskeyAuditsAndMails", testRegister},
		{"NeedsRecentAuthentication", testRegisterNeedsRecent},
		{"RefusesAnotherOriginOrRP", testRegisterOtherOrigin},
	}},
	{"SignUp", []test{
		{"MakesAnAccountWithoutPasswordSignedInAndMailsTheLink", testSignUp},
		{"NamesThePasskey", testSignUpPasskeyName},
		{"BeginDoesNotTellATakenAddress", testSignUpEnumerationSafe},
		{"RefusesInputAsRegisterDoes", testSignUpRefusedInput},
		{"RefusesACredentialWithoutUserVerificationOrOfAnotherOrigin", testSignUpRefusedCredential},
		{"RunsTheRegisterHooks", testSignUpHooks},
		{"CountsTheRegistrationLimit", testSignUpLimit},
		{"BeginCountsTheBeginLimit", testSignUpBeginLimit},
		{"RefusesAStoredCredential", testSignUpCredentialTaken},
		{"UnverifiedAccountAddsNoPasskey", testSignUpUnverifiedIsLimited},
		{"OwnerClaimsTheAddressByReset", testSignUpClaimedByReset},
		{"OwnerClaimsTheAddressBySignInByEmail", testSignUpClaimedBySignInByEmail},
		{"RaceOfFinishesOfOneCeremonyMakesOneAccount", testSignUpFinishRace},
		{"RaceOfSignUpsOfOneAddressMakesOneAccount", testSignUpAddressRace},
	}},
	{"Passwordless", []test{
		{"SignsIn", testPasswordless},
		{"RefusesAnotherOriginAndCountsTheLoginLimit", testPasswordlessRefused},
		{"OffWhenNotAllowed", testPasswordlessOff},
	}},
	{"TwoFactor", []test{
		{"FinishesThePendingLogin", testTwoFactor},
		{"ErrorKeepsThePendingCookie", testTwoFactorErrorKeepsPending},
		{"NeedsAPendingLogin", testTwoFactorNeedsPending},
		{"BoundToItsPendingLogin", testTwoFactorBound},
		{"SharesThePerUserLimit", testTwoFactorLimit},
	}},
	{"Manage", []test{
		{"List", testList},
		{"Rename", testRename},
		{"DeleteNeedsRecentAuthenticationAndMails", testDelete},
		{"AnotherUsersPasskeyIsNotFound", testOtherUsersPasskey},
	}},
	{"Reauth", []test{
		{"APasskeyMakesTheSessionRecent", testReauth},
		{"BoundToTheUserItWasBegunFor", testReauthOtherUser},
		{"IsBothFactorsOnA2FAAccount", testReauthTwoFactor},
		{"AccountWithoutPasswordDoesEverySensitiveChange", testWithoutPassword},
		{"LastPasskeyOfAnAccountWithoutPasswordStays", testLastPasskey},
	}},
	{"Takeover", []test{
		{"RegisteringNeedsAVerifiedAddress", testRegisterNeedsVerified},
		{"PreAccountPasskeyDiesWithTheReset", testPreAccountTakeover},
		{"ThiefPasskeyDiesWithLogoutEverywhere", testThiefPersistence},
		{"LogoutEverywhereNeedsRecentAuthentication", testLogoutAllNeedsRecent},
		{"RegistrationRacingLogoutEverywhereLeavesNoPasskey", testRegisterRacesLogoutAll},
	}},
	{"Challenge", []test{
		{"ReplayRefused", testReplay},
		{"ExpiredRefused", testExpired},
		{"RaceOfFinishesOnOneChallengeHasOneWinner", testRace},
		{"OfAnotherPurposeRefused", testOtherPurpose},
	}},
	{"Counter", []test{
		{"ClonedKeyAudited", func(t *testing.T, h Harness) { testCounter(t, h, false) }},
		{"ClonedKeyRefusedWithRefuseCounterRegression", func(t *testing.T, h Harness) { testCounter(t, h, true) }},
	}},
}

// env is one subtest's world: a Service and a passkeys Handler on a fresh
// store, served by the harness, with the clock, mailer and audit log they
// use.
type env struct {
	t     *testing.T
	clock *clock.Clock
	users user.Store
	keys  user.Passkeys
	svc   *auth.Service
	pk    *passkeys.Handler
	mail  *mail.Capture
	audit *authtest.AuditLog
	base  string
	totp  *totp.TOTP
	tr    *http.Transport
}

// newEnv builds and serves a Service and a Handler with the suite's
// defaults, changed by pc and ac when not nil.
func newEnv(t *testing.T, h Harness, pc func(*passkeys.Config), ac func(*auth.Config)) *env {
	t.Helper()
	e := &env{t: t, clock: clock.New(start), audit: &authtest.AuditLog{}}
	e.users = h.NewUsers(t)
	var ok bool
	if e.keys, ok = e.users.(user.Passkeys); !ok {
		t.Fatalf("passkeystest: Harness.NewUsers's store (%T) does not implement user.Passkeys", e.users)
	}
	e.svc, e.mail = authtest.NewService(t, e.users, func(c *auth.Config) {
		c.Now = e.clock.Now
		c.Audit = e.audit.Record
		if ac != nil {
			ac(c)
		}
	})
	cfg := passkeys.Config{RPID: RPID, RPDisplayName: "Passkeys Test", Origins: []string{Origin}, Now: e.clock.Now,
		Logger: slog.New(slog.DiscardHandler)}
	if pc != nil {
		pc(&cfg)
	}
	var err error
	if e.pk, err = passkeys.New(e.svc, cfg); err != nil {
		t.Fatalf("passkeystest: passkeys.New: %v", err)
	}
	t.Cleanup(func() { _ = e.pk.Close() })
	if e.totp, err = totp.New(totp.Config{Now: e.clock.Now}); err != nil {
		t.Fatal(err)
	}
	e.base = strings.TrimSuffix(h.Start(t, e.svc, e.pk), "/")
	e.tr = http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(e.tr.CloseIdleConnections)
	return e
}

// mustEvent checks the last event of typ.
func (e *env) mustEvent(t *testing.T, typ auth.EventType, userID, detail string) {
	t.Helper()
	ev, ok := e.audit.Last(typ)
	if !ok || ev.UserID != userID || ev.Detail != detail {
		t.Errorf("audit: last %s is %+v (found %v), want user %s, detail %q", typ, ev, ok, userID, detail)
	}
}

// mails returns the mails of kind sent so far.
func (e *env) mails(t *testing.T, kind mail.Kind) []mail.Message {
	t.Helper()
	if err := e.svc.FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []mail.Message
	for _, m := range e.mail.Messages() {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// mustMail checks that exactly n mails of kind went to to, each naming
// the passkey name.
func (e *env) mustMail(t *testing.T, kind mail.Kind, to, name string, n int) {
	t.Helper()
	ms := e.mails(t, kind)
	if len(ms) != n {
		t.Fatalf("%d %s mails, want %d", len(ms), kind, n)
	}
	for _, m := range ms {
		if m.To != to || !strings.Contains(m.Text, name) {
			t.Errorf("%s mail to %s, text %q: want to %s, naming %q", kind, m.To, m.Text, to, name)
		}
	}
}

// browser is one simulated browser: its own cookie jar.
type browser struct {
	e *env
	c *http.Client
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{e: e, c: &http.Client{Jar: jar, Transport: e.tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// fetch sends one request and reads the reply; body, when not nil, goes
// as JSON. It returns errors, for goroutines other than the test's.
func (b *browser) fetch(method, path string, body any) (authtest.Reply, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return authtest.Reply{}, err
		}
		rd = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, b.e.base+path, rd)
	if err != nil {
		return authtest.Reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		return authtest.Reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return authtest.Reply{}, err
	}
	r := authtest.Reply{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		r.JSON = m
	}
	return r, nil
}

// do is fetch failing the test on a transport error.
func (b *browser) do(t *testing.T, method, path string, body any) authtest.Reply {
	t.Helper()
	r, err := b.fetch(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func (b *browser) post(t *testing.T, path string, body any) authtest.Reply {
	t.Helper()
	return b.do(t, http.MethodPost, path, body)
}

// cookie returns the value of the browser's cookie name, "" for none.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.e.base + passkeys.Prefix + "/x")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// clone is a second browser with b's cookies: an attacker's copy, or a
// second tab's.
func (b *browser) clone() *browser {
	d := b.e.browser()
	u, _ := url.Parse(b.e.base + passkeys.Prefix + "/x")
	var cs []*http.Cookie
	for _, c := range b.c.Jar.Cookies(u) {
		cs = append(cs, &http.Cookie{Name: c.Name, Value: c.Value, Path: "/"})
	}
	root, _ := url.Parse(b.e.base + "/")
	d.c.Jar.SetCookies(root, cs)
	return d
}

// signedInAs returns the id of the browser's signed-in user, "" for none.
func (b *browser) signedInAs(t *testing.T) string {
	t.Helper()
	r := b.do(t, http.MethodGet, "/api/auth/me", nil)
	if r.Status != http.StatusOK {
		return ""
	}
	id, _ := r.JSON["id"].(string)
	return id
}

// wantError checks an error reply: exactly want's status, text and code.
func wantError(t *testing.T, what string, r authtest.Reply, want *auth.Error) {
	t.Helper()
	if r.Status != want.Status || r.JSON["error"] != want.Message || r.JSON["code"] != string(want.Code) {
		t.Fatalf("%s: got %s, want %d {\"error\":%q,\"code\":%q}", what, r, want.Status, want.Message, want.Code)
	}
}

// setCookie gives b a cookie for every path (a copied one).
func (b *browser) setCookie(name, value string) {
	root, _ := url.Parse(b.e.base + "/")
	b.c.Jar.SetCookies(root, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// wantOK checks a 200 reply.
func wantOK(t *testing.T, what string, r authtest.Reply) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: got %s, want 200", what, r)
	}
}

// wantSuccess checks a 200 {"success": true} reply.
func wantSuccess(t *testing.T, what string, r authtest.Reply) {
	t.Helper()
	if r.Status != http.StatusOK || len(r.JSON) != 1 || r.JSON["success"] != true {
		t.Fatalf("%s: got %s, want 200 {\"success\":true}", what, r)
	}
}

// raw is the body of a reply, for the Authenticator.
func raw(r authtest.Reply) []byte { return []byte(r.Body) }

// signUp registers email on a new browser, which is then signed in and
// recently authenticated, verifies the address by its mailed link, and
// returns the stored user.
func (e *env) signUp(t *testing.T, email string) (*browser, *user.User) {
	t.Helper()
	b, _ := e.signUpUnverified(t, email)
	wantOK(t, "verify-email", b.do(t, http.MethodGet, "/api/auth/verify-email/"+url.PathEscape(e.linkToken(t, mail.KindVerifyEmail, email)), nil))
	u, err := e.users.ByEmail(context.Background(), email)
	if err != nil || !u.EmailVerified() {
		t.Fatalf("verify %s: %+v, %v", email, u, err)
	}
	return b, u
}

// linkToken returns the token of the newest mail of kind to addr: the
// last path segment of its link.
func (e *env) linkToken(t *testing.T, kind mail.Kind, addr string) string {
	t.Helper()
	ms := e.mails(t, kind)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].To != addr {
			continue
		}
		j := strings.LastIndexByte(ms[i].Link, '/')
		tok, err := url.PathUnescape(ms[i].Link[j+1:])
		if j < 0 || err != nil || tok == "" {
			t.Fatalf("%s mail to %s: link %q", kind, addr, ms[i].Link)
		}
		return tok
	}
	t.Fatalf("no %s mail to %s", kind, addr)
	return ""
}

// signUpUnverified registers email on a new browser, which is then signed
// in and recently authenticated, and returns the stored user, whose
// address is not verified.
func (e *env) signUpUnverified(t *testing.T, email string) (*browser, *user.User) {
	t.Helper()
	b := e.browser()
	r := b.post(t, "/api/auth/register", map[string]string{"email": email, "password": password, "name": "Ada"})
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("register %s: %s", email, r)
	}
	u, err := e.users.ByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("register %s: %v", email, err)
	}
	return b, u
}

// signUpWithPasskey signs Ada up on a new browser (signed in, recently
// authenticated) and adds a passkey "Laptop" of a new authenticator.
func (e *env) signUpWithPasskey(t *testing.T) (home *browser, u *user.User, a *Authenticator, k *Credential) {
	t.Helper()
	home, u = e.signUp(t, "ada@example.com")
	a = NewAuthenticator(t)
	k, _ = e.addPasskey(t, home, a, "Laptop")
	return home, u, a, k
}

// addPasskey registers a new credential of a on b, named name, and returns
// it and the finish reply's JSON.
func (e *env) addPasskey(t *testing.T, b *browser, a *Authenticator, name string) (*Credential, map[string]any) {
	t.Helper()
	begin := b.post(t, passkeys.Prefix+"/register/begin", nil)
	wantOK(t, "register/begin", begin)
	cred, c := a.Create(raw(begin), Origin)
	cred["name"] = name
	fin := b.post(t, passkeys.Prefix+"/register/finish", cred)
	wantOK(t, "register/finish", fin)
	return c, fin.JSON
}

// stored returns the user's passkeys in the store.
func (e *env) stored(t *testing.T, userID string) []*user.Passkey {
	t.Helper()
	ps, err := e.keys.ListPasskeys(context.Background(), userID)
	if err != nil {
		t.Fatalf("ListPasskeys: %v", err)
	}
	return ps
}

// passwordless runs a passwordless sign-in on b with c (nil: the newest
// credential), from the page of origin, and returns the finish reply.
func (e *env) passwordless(t *testing.T, b *browser, a *Authenticator, c *Credential, origin string) authtest.Reply {
	t.Helper()
	begin := b.post(t, passkeys.Prefix+"/login/begin", nil)
	wantOK(t, "login/begin", begin)
	return b.post(t, passkeys.Prefix+"/login/finish", a.Get(raw(begin), origin, c))
}

// enable2FA turns TOTP on for b's user through the 2FA routes.
func (e *env) enable2FA(t *testing.T, b *browser) {
	t.Helper()
	r := b.post(t, "/api/2fa/setup", nil)
	wantOK(t, "2fa/setup", r)
	qr, _ := r.JSON["qrUri"].(string)
	u, err := url.Parse(qr)
	if err != nil || u.Query().Get("secret") == "" {
		t.Fatalf("2fa/setup: %s: no secret in qrUri", r)
	}
	code, err := e.totp.Code(u.Query().Get("secret"), e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, "2fa/confirm", b.post(t, "/api/2fa/confirm", map[string]string{"code": code}))
}

// pending returns a new browser past the password step of email, a 2FA
// account: it holds the pending cookie.
func (e *env) pending(t *testing.T, email string) *browser {
	t.Helper()
	b := e.browser()
	r := b.post(t, "/api/login", map[string]string{"email": email, "password": password})
	if r.Status != http.StatusOK || r.JSON["requiresTwoFactor"] != true || b.cookie(auth.PendingCookie) == "" {
		t.Fatalf("login of %s: %s, want a pending 2FA login", email, r)
	}
	return b
}

// twoFactorUser is ada with 2FA on and one passkey (of the returned
// authenticator).
func (e *env) twoFactorUser(t *testing.T) (*user.User, *Authenticator, *Credential) {
	t.Helper()
	home, u := e.signUp(t, "ada@example.com")
	e.enable2FA(t, home)
	a := NewAuthenticator(t)
	c, _ := e.addPasskey(t, home, a, "Laptop")
	return u, a, c
}

package passkeystest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
)

// The sign-up tests: an account made with a passkey alone, no password.

// signUpBody is the body of signup/begin.
func signUpBody(email, name string) map[string]string {
	return map[string]string{"email": email, "name": name}
}

// passkeySignUp signs email up with a new authenticator's passkey on b
// and returns the finish reply, the authenticator and its credential.
func (e *env) passkeySignUp(t *testing.T, b *browser, email string) (authtest.Reply, *Authenticator, *Credential) {
	t.Helper()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody(email, "Grace"))
	wantOK(t, "signup/begin", begin)
	a := NewAuthenticator(t)
	cred, c := a.Create(raw(begin), Origin)
	return b.post(t, passkeys.Prefix+"/signup/finish", cred), a, c
}

// testSignUp: begin and finish make an account without a password, its
// address not verified, with the passkey (default name "Passkey"), signed
// in on the browser; the verification link is mailed and verifies it;
// the passkey signs in on another browser.
func testSignUp(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("  Grace@Example.com ", " Grace Hopper "))
	wantOK(t, "signup/begin", begin)
	pk, _ := begin.JSON["publicKey"].(map[string]any)
	usr, _ := pk["user"].(map[string]any)
	sel, _ := pk["authenticatorSelection"].(map[string]any)
	if usr["name"] != "grace@example.com" || usr["displayName"] != "Grace Hopper" || sel["residentKey"] != "required" || sel["userVerification"] != "required" {
		t.Fatalf("creation options: %s", begin.Body)
	}
	if n := len(e.mails(t, mail.KindVerifyEmail)); n != 0 {
		t.Fatalf("%d verification mails after begin, want 0", n)
	}
	a := NewAuthenticator(t)
	cred, c := a.Create(raw(begin), Origin)
	fin := b.post(t, passkeys.Prefix+"/signup/finish", cred)
	wantSuccess(t, "signup/finish", fin)
	if b.cookie(passkeys.ChallengeCookie) != "" {
		t.Error("the challenge cookie outlived the finish")
	}

	u, err := e.users.ByEmail(context.Background(), "grace@example.com")
	if err != nil {
		t.Fatalf("the account: %v", err)
	}
	if u.PasswordHash != "" || u.EmailVerified() || u.Name != "Grace Hopper" {
		t.Fatalf("the account: password %q, verified %v, name %q; want none, false, Grace Hopper", u.PasswordHash, u.EmailVerified(), u.Name)
	}
	if b.signedInAs(t) != u.ID {
		t.Fatal("the new account is not signed in on the browser that signed up")
	}
	keys := e.stored(t, u.ID)
	if len(keys) != 1 || string(keys[0].ID) != string(c.ID) || keys[0].Name != "Passkey" || string(keys[0].UserHandle) != string(c.UserHandle) {
		t.Fatalf("stored passkeys: %+v, want the one credential, named Passkey", keys)
	}
	e.mustEvent(t, auth.EventRegistered, u.ID, string(auth.LoginPasskey))
	e.mustEvent(t, auth.EventPasskeyAdded, u.ID, "Passkey")

	ms := e.mails(t, mail.KindVerifyEmail)
	if len(ms) != 1 {
		t.Fatalf("%d verification mails, want 1", len(ms))
	}
	m := ms[0]
	if m.To != "grace@example.com" || !strings.HasPrefix(m.Link, "http://app.test/") ||
		!strings.Contains(m.Text, m.Link) || !strings.Contains(m.Text, "Hi Grace Hopper,") || !strings.Contains(m.Subject, "Verify your email address") {
		t.Fatalf("verification mail: to %s, subject %q, link %q, text %q", m.To, m.Subject, m.Link, m.Text)
	}
	if n := len(e.mails(t, mail.KindPasskeyAdded)); n != 0 {
		t.Errorf("%d passkey-added notices to an address nobody proved, want 0", n)
	}
	wantOK(t, "verify-email", b.do(t, http.MethodGet, "/api/auth/verify-email/"+url.PathEscape(e.linkToken(t, mail.KindVerifyEmail, "grace@example.com")), nil))
	if u, _ = e.users.ByID(context.Background(), u.ID); !u.EmailVerified() {
		t.Fatal("the mailed link did not verify the address")
	}
	other := e.browser()
	wantSuccess(t, "passwordless sign-in with the sign-up's passkey", e.passwordless(t, other, a, c, Origin))
	if other.signedInAs(t) != u.ID {
		t.Fatal("the passkey signed in someone else")
	}
}

// testSignUpPasskeyName: the finish's passkeyName names the passkey; an
// invalid one is refused and makes nothing.
func testSignUpPasskeyName(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
	cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
	cred["passkeyName"] = strings.Repeat("x", auth.MaxPasskeyName+1)
	wantError(t, "a long passkey name", b.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrNameTooLong)
	e.mustNoAccount(t, "grace@example.com")
	begin = b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
	cred, _ = NewAuthenticator(t).Create(raw(begin), Origin)
	cred["passkeyName"] = "Phone\u202e"
	wantError(t, "a passkey name with a bidi override", b.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrInvalidCharacters)
	e.mustNoAccount(t, "grace@example.com")

	begin = b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
	cred, _ = NewAuthenticator(t).Create(raw(begin), Origin)
	cred["passkeyName"] = "  Phone "
	wantSuccess(t, "signup/finish", b.post(t, passkeys.Prefix+"/signup/finish", cred))
	u, err := e.users.ByEmail(context.Background(), "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if keys := e.stored(t, u.ID); len(keys) != 1 || keys[0].Name != "Phone" {
		t.Fatalf("stored passkeys: %+v, want one named Phone", keys)
	}
}

// mustNoAccount fails unless email has no account.
func (e *env) mustNoAccount(t *testing.T, email string) {
	t.Helper()
	if u, err := e.users.ByEmail(context.Background(), email); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("%s has an account (%+v, %v), want none", email, u, err)
	}
}

// masked is a begin reply with its two random values (the challenge and
// the user handle) replaced by placeholders, its Date and its challenge
// cookie's value dropped: what is left must not depend on the address.
func masked(t *testing.T, r authtest.Reply) string {
	t.Helper()
	pk, _ := r.JSON["publicKey"].(map[string]any)
	usr, _ := pk["user"].(map[string]any)
	challenge, _ := pk["challenge"].(string)
	handle, _ := usr["id"].(string)
	if challenge == "" || handle == "" {
		t.Fatalf("begin reply without a challenge or a user id: %s", r)
	}
	body := strings.ReplaceAll(strings.ReplaceAll(r.Body, challenge, "CHALLENGE"), handle, "HANDLE")
	h := r.Header.Clone()
	h.Del("Date")
	cookies := h.Values("Set-Cookie")
	h.Del("Set-Cookie")
	for _, c := range cookies {
		name, rest, _ := strings.Cut(c, "=")
		_, attrs, _ := strings.Cut(rest, ";")
		h.Add("Set-Cookie", name+"=VALUE;"+attrs)
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d\n%s\n%s", r.Status, hdr, body)
}

// testSignUpEnumerationSafe: on two Services alike but for an account of
// one address (a taken one, on e, and a free one, on fe: their own limits
// and clocks, the harness's store maybe shared), begin answers the taken
// address exactly as the free one: the same status, headers and body but
// for the random challenge and user handle and the address itself, the
// same cookie. The taken address's finish is then refused as register
// refuses it (400 email_already_registered) and changes nothing: no
// account, no passkey, no session, no mail.
func testSignUpEnumerationSafe(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	_, owner := e.signUp(t, "ada@example.com")
	mailsBefore := len(e.mail.Messages())
	fe := newEnv(t, h, nil, nil)

	taken, free := e.browser(), fe.browser()
	rt := taken.post(t, passkeys.Prefix+"/signup/begin", signUpBody("ada@example.com", "Grace"))
	rf := free.post(t, passkeys.Prefix+"/signup/begin", signUpBody("adb@example.com", "Grace"))
	wantOK(t, "signup/begin", rt)
	fb := rf
	fb.Body = strings.ReplaceAll(rf.Body, "adb@example.com", "ada@example.com")
	if strings.Count(rt.Body, "ada@example.com") != 1 || fb.Body == rf.Body {
		t.Fatalf("the address is not named once in the options: %s", rt.Body)
	}
	if a, b := masked(t, rt), masked(t, fb); a != b {
		t.Fatalf("begin tells a taken address from a free one:\ntaken %s\nfree  %s", a, b)
	}
	if taken.cookie(passkeys.ChallengeCookie) == "" || free.cookie(passkeys.ChallengeCookie) == "" {
		t.Fatal("a begin set no challenge cookie")
	}

	cred, _ := NewAuthenticator(t).Create(raw(rt), Origin)
	wantError(t, "signup/finish of a taken address", taken.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrEmailRegistered)
	if keys := e.stored(t, owner.ID); len(keys) != 0 {
		t.Fatalf("the owner's account got %d passkeys", len(keys))
	}
	if taken.signedInAs(t) != "" {
		t.Fatal("a refused sign-up signed someone in")
	}
	if n := len(e.mail.Messages()); n != mailsBefore {
		t.Fatalf("%d mails after a refused sign-up, want %d", n, mailsBefore)
	}
	if n := len(e.audit.Of(auth.EventRegistered)); n != 1 {
		t.Fatalf("%d registered events, want 1 (the owner's)", n)
	}
	cred, _ = NewAuthenticator(t).Create(raw(rf), Origin)
	wantSuccess(t, "signup/finish of the free address", free.post(t, passkeys.Prefix+"/signup/finish", cred))
}

// testSignUpRefusedInput: begin checks the input as register does and,
// refusing, sets no challenge cookie; with registration off, or
// passwordless sign-in off, both routes answer 404 feature_disabled.
func testSignUpRefusedInput(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	for _, c := range []struct {
		what        string
		email, name string
		want        *auth.Error
	}{
		{"no address", "", "Grace", auth.ErrEmailRequired},
		{"a malformed address", "grace-at-example.com", "Grace", auth.ErrInvalidEmail},
		{"a long address", strings.Repeat("g", 250) + "@example.com", "Grace", auth.ErrEmailTooLong},
		{"no name", "grace@example.com", "  ", auth.ErrNameRequired},
		{"a long name", "grace@example.com", strings.Repeat("g", 201), auth.ErrNameTooLong},
		{"a bidi override", "grace@example.com", "Grace\u202e", &auth.Error{Status: http.StatusBadRequest, Code: auth.ErrInvalidCharacters.Code, Message: "name contains invalid characters"}},
	} {
		wantError(t, c.what, b.post(t, passkeys.Prefix+"/signup/begin", signUpBody(c.email, c.name)), c.want)
		if b.cookie(passkeys.ChallengeCookie) != "" {
			t.Fatalf("%s: a refused begin set a challenge cookie", c.what)
		}
	}
	wantError(t, "signup/finish without a ceremony", b.post(t, passkeys.Prefix+"/signup/finish", map[string]string{}), auth.ErrPasskeyChallengeInvalid)

	closed := newEnv(t, h, nil, func(c *auth.Config) { c.Disable = append(c.Disable, auth.FeatureRegistration) })
	wantError(t, "registration off", closed.browser().post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace")), auth.ErrFeatureDisabled)
	no := false
	off := newEnv(t, h, func(c *passkeys.Config) { c.AllowPasswordless = &no }, nil)
	ob := off.browser()
	wantError(t, "passwordless off, begin", ob.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace")), auth.ErrFeatureDisabled)
	wantError(t, "passwordless off, finish", ob.post(t, passkeys.Prefix+"/signup/finish", map[string]string{}), auth.ErrFeatureDisabled)
}

// testSignUpRefusedCredential: a credential without user verification, or
// made for another origin, is refused (400 passkey_invalid), spends the
// ceremony and makes nothing.
func testSignUpRefusedCredential(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
	a := NewAuthenticator(t)
	a.UserVerified = false
	cred, _ := a.Create(raw(begin), Origin)
	wantError(t, "without user verification", b.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrPasskeyInvalid)
	wantError(t, "the same ceremony again", b.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrPasskeyChallengeInvalid)

	begin = b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
	cred, _ = NewAuthenticator(t).Create(raw(begin), "https://evil.example")
	wantError(t, "another origin", b.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrPasskeyInvalid)
	e.mustNoAccount(t, "grace@example.com")
	if b.signedInAs(t) != "" || len(e.mails(t, mail.KindVerifyEmail)) != 0 {
		t.Fatal("a refused sign-up signed in or mailed")
	}
}

// testSignUpHooks: BeforeRegister sees the address and name and may veto
// (its error answered, nothing made); a failed AfterRegister undoes the
// account and its passkey.
func testSignUpHooks(t *testing.T, h Harness) {
	veto := &auth.Error{Status: http.StatusForbidden, Code: "invitation_required", Message: "An invitation is required"}
	var seen []string
	var mu sync.Mutex
	e := newEnv(t, h, nil, func(c *auth.Config) {
		c.Hooks.BeforeRegister = func(_ context.Context, r *auth.Registration) error {
			mu.Lock()
			seen = append(seen, r.Email+"|"+r.Name)
			mu.Unlock()
			if strings.HasSuffix(r.Email, "@closed.example") {
				return veto
			}
			return nil
		}
		c.Hooks.AfterRegister = func(_ context.Context, u *user.User, _ *auth.Registration) error {
			if u.Name == "Undo" {
				return veto
			}
			return nil
		}
	})
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@closed.example", "Grace"))
	cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
	wantError(t, "vetoed by BeforeRegister", b.post(t, passkeys.Prefix+"/signup/finish", cred), veto)
	e.mustNoAccount(t, "grace@closed.example")

	begin = b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("undo@example.com", "Undo"))
	cred, c := NewAuthenticator(t).Create(raw(begin), Origin)
	wantError(t, "failed AfterRegister", b.post(t, passkeys.Prefix+"/signup/finish", cred), veto)
	e.mustNoAccount(t, "undo@example.com")
	if _, err := e.keys.PasskeyByID(context.Background(), c.ID); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("the undone account's passkey: %v, want not found", err)
	}
	if b.signedInAs(t) != "" || len(e.mails(t, mail.KindVerifyEmail)) != 0 {
		t.Fatal("a vetoed sign-up signed in or mailed")
	}
	if len(seen) != 2 || seen[0] != "grace@closed.example|Grace" || seen[1] != "undo@example.com|Undo" {
		t.Fatalf("BeforeRegister saw %q", seen)
	}
}

// testSignUpLimit: the finish counts against the registration limit of
// the client's address (429 too_many_registrations), as register does.
func testSignUpLimit(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, func(c *auth.Config) { c.Limits.Register = auth.Limit{Max: 1, Window: time.Hour} })
	r, _, _ := e.passkeySignUp(t, e.browser(), "grace@example.com")
	wantSuccess(t, "the first sign-up", r)
	r, _, _ = e.passkeySignUp(t, e.browser(), "alan@example.com")
	wantError(t, "the second sign-up", r, auth.ErrTooManyRegistrations)
	e.mustNoAccount(t, "alan@example.com")
}

// testSignUpUnverifiedIsLimited: until its address is verified, the new
// account adds no passkey (403 email_not_verified), so whoever signed up
// someone else's address cannot dig in before the owner claims it.
func testSignUpUnverifiedIsLimited(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	r, _, _ := e.passkeySignUp(t, b, "grace@example.com")
	wantSuccess(t, "signup", r)
	wantError(t, "register/begin, unverified", b.post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrEmailNotVerified)
}

// testSignUpClaimedByReset: an attacker signs up the victim's address with
// a passkey; the victim, told the address is taken, resets the password
// by the mailed link: the attacker's passkey is deleted (audited, mailed)
// and signs nobody in, and the attacker's session has ended.
func testSignUpClaimedByReset(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	attacker, u, a, k := e.attackerSignsUp(t)
	victim := e.browser()
	vr, _, _ := e.passkeySignUp(t, victim, "victim@example.com")
	wantError(t, "the victim's sign-up", vr, auth.ErrEmailRegistered)
	e.resetDeletesPasskey(t, victim, u.ID, "Passkey", a, k)
	if attacker.signedInAs(t) != "" {
		t.Fatal("the attacker's session outlived the reset")
	}
}

// raceFinishes posts the finish bodies to path at once, each from its
// browser, and returns how many answered 200; every other answer must be
// want.
func raceFinishes(t *testing.T, browsers []*browser, path string, bodies []any, want *auth.Error) int {
	t.Helper()
	type reply struct {
		status int
		code   any
		err    error
	}
	replies := make([]reply, len(browsers))
	var wg sync.WaitGroup
	for i, b := range browsers {
		wg.Go(func() {
			r, err := b.fetch(http.MethodPost, path, bodies[i])
			replies[i] = reply{r.Status, r.JSON["code"], err}
		})
	}
	wg.Wait()
	won := 0
	for i, r := range replies {
		switch {
		case r.err != nil:
			t.Errorf("racer %d: %v", i, r.err)
		case r.status == http.StatusOK:
			won++
		case r.status != want.Status || r.code != string(want.Code):
			t.Errorf("racer %d: %d %v, want 200 or %d %s", i, r.status, r.code, want.Status, want.Code)
		}
	}
	return won
}

// signUpRacers is how many finishes the races send at once.
const signUpRacers = 50

// testSignUpFinishRace: 50 finishes of one ceremony (the same cookie, the
// same credential) at once make exactly one account with one passkey; the
// others get passkey_challenge_invalid.
func testSignUpFinishRace(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
	wantOK(t, "signup/begin", begin)
	cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
	browsers := make([]*browser, signUpRacers)
	bodies := make([]any, signUpRacers)
	for i := range browsers {
		browsers[i], bodies[i] = b.clone(), cred
	}
	if won := raceFinishes(t, browsers, passkeys.Prefix+"/signup/finish", bodies, auth.ErrPasskeyChallengeInvalid); won != 1 {
		t.Fatalf("%d racing finishes of one ceremony made an account, want exactly 1", won)
	}
	e.mustOneAccount(t, "grace@example.com")
}

// testSignUpAddressRace: 50 browsers sign one address up at once, each
// with its own ceremony and authenticator: exactly one account is made,
// with one passkey; the others get email_already_registered and leave no
// passkey behind.
func testSignUpAddressRace(t *testing.T, h Harness) {
	e := newEnv(t, h, func(c *passkeys.Config) { c.BeginLimit = auth.Limit{Max: 1000, Window: time.Minute} },
		func(c *auth.Config) { c.Limits.Register = auth.Limit{Max: 1000, Window: time.Hour} })
	browsers := make([]*browser, signUpRacers)
	bodies := make([]any, signUpRacers)
	var ids [][]byte
	for i := range browsers {
		browsers[i] = e.browser()
		begin := browsers[i].post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace"))
		wantOK(t, "signup/begin", begin)
		cred, c := NewAuthenticator(t).Create(raw(begin), Origin)
		bodies[i], ids = cred, append(ids, c.ID)
	}
	if won := raceFinishes(t, browsers, passkeys.Prefix+"/signup/finish", bodies, auth.ErrEmailRegistered); won != 1 {
		t.Fatalf("%d racing sign-ups of one address made an account, want exactly 1", won)
	}
	u := e.mustOneAccount(t, "grace@example.com")
	stored := 0
	for _, id := range ids {
		p, err := e.keys.PasskeyByID(context.Background(), id)
		switch {
		case err == nil && p.UserID == u.ID:
			stored++
		case err == nil:
			t.Errorf("a passkey of another user %s", p.UserID)
		case !errors.Is(err, user.ErrNotFound):
			t.Fatal(err)
		}
	}
	if stored != 1 {
		t.Fatalf("%d of the racers' passkeys stored, want 1", stored)
	}
}

// mustOneAccount checks that email has one account, with one passkey, one
// registered event and one verification mail, and returns it.
func (e *env) mustOneAccount(t *testing.T, email string) *user.User {
	t.Helper()
	u, err := e.users.ByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("the account: %v", err)
	}
	if n := len(e.stored(t, u.ID)); n != 1 {
		t.Errorf("%d passkeys, want 1", n)
	}
	if n := len(e.audit.Of(auth.EventRegistered)); n != 1 {
		t.Errorf("%d registered events, want 1", n)
	}
	if n := len(e.mails(t, mail.KindVerifyEmail)); n != 1 {
		t.Errorf("%d verification mails, want 1", n)
	}
	return u
}

// mailedCode is the code of the newest sign-in mail to addr.
func (e *env) mailedSignInCode(t *testing.T, addr string) string {
	t.Helper()
	ms := e.mails(t, mail.KindEmailSignIn)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].To != addr {
			continue
		}
		if m := signInCodeIn.FindStringSubmatch(ms[i].Text); m != nil {
			return m[1]
		}
		t.Fatalf("no code in the sign-in mail:\n%s", ms[i].Text)
	}
	t.Fatalf("no sign-in mail to %s", addr)
	return ""
}

var signInCodeIn = regexp.MustCompile(`(?m)^Your code: ([0-9]{6})$`)

// testSignUpClaimedBySignInByEmail: with sign-in by email on, an attacker
// signs up the victim's address with a passkey; the victim signs in by a
// code mailed to the address: the attacker's passkey is deleted (audited,
// mailed), the attacker's session ends, the address is verified and the
// victim is signed in. A passkey sign-up the owner made and verified keeps
// its passkey through sign-in by email.
func testSignUpClaimedBySignInByEmail(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, func(c *auth.Config) { c.EmailSignIn.Enabled = true })
	attacker, u, a, k := e.attackerSignsUp(t)

	victim := e.browser()
	wantOK(t, "email-sign-in", victim.post(t, "/api/auth/email-sign-in", map[string]string{"email": "victim@example.com"}))
	wantSuccess(t, "email-sign-in/verify", victim.post(t, "/api/auth/email-sign-in/verify",
		map[string]string{"email": "victim@example.com", "code": e.mailedSignInCode(t, "victim@example.com")}))
	if victim.signedInAs(t) != u.ID {
		t.Fatal("the owner is not signed in")
	}
	if n := len(e.stored(t, u.ID)); n != 0 {
		t.Fatalf("%d passkeys left after the owner proved the address, want 0", n)
	}
	if got, _ := e.users.ByID(context.Background(), u.ID); !got.EmailVerified() {
		t.Fatal("the address is not verified")
	}
	e.mustEvent(t, auth.EventUnverifiedSetupRevoked, u.ID, string(auth.LoginEmailSignIn))
	e.mustEvent(t, auth.EventPasskeyDeleted, u.ID, "Passkey")
	e.mustMail(t, mail.KindPasskeyDeleted, "victim@example.com", "Passkey", 1)
	if attacker.signedInAs(t) != "" {
		t.Fatal("the attacker's session outlived the owner's proof")
	}
	wantError(t, "the attacker's passkey", e.passwordless(t, e.browser(), a, k, Origin), auth.ErrPasskeyInvalid)

	owner := e.browser()
	r, a, k := e.passkeySignUp(t, owner, "grace@example.com")
	wantSuccess(t, "the owner's sign-up", r)
	wantOK(t, "verify-email", owner.do(t, http.MethodGet, "/api/auth/verify-email/"+url.PathEscape(e.linkToken(t, mail.KindVerifyEmail, "grace@example.com")), nil))
	other := e.browser()
	wantOK(t, "email-sign-in", other.post(t, "/api/auth/email-sign-in", map[string]string{"email": "grace@example.com"}))
	wantSuccess(t, "email-sign-in/verify", other.post(t, "/api/auth/email-sign-in/verify",
		map[string]string{"email": "grace@example.com", "code": e.mailedSignInCode(t, "grace@example.com")}))
	wantSuccess(t, "the verified owner's passkey", e.passwordless(t, e.browser(), a, k, Origin))
	if owner.signedInAs(t) == "" {
		t.Fatal("sign-in by email ended the verified owner's session")
	}
}

// testSignUpBeginLimit: begin counts against Config.BeginLimit per client
// address (429 too_many_requests) and then sets no challenge cookie.
func testSignUpBeginLimit(t *testing.T, h Harness) {
	e := newEnv(t, h, func(c *passkeys.Config) { c.BeginLimit = auth.Limit{Max: 1, Window: time.Minute} }, nil)
	wantOK(t, "the first begin", e.browser().post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace")))
	b := e.browser()
	wantError(t, "the second begin", b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("grace@example.com", "Grace")), auth.ErrTooManyRequests)
	if b.cookie(passkeys.ChallengeCookie) != "" {
		t.Fatal("a refused begin set a challenge cookie")
	}
}

// withCredentialID rewrites a creation answer of Create to attest the
// credential id id (of the same length) instead of its own: attestation
// "none" signs nothing, so a client can name any id it likes.
func withCredentialID(t *testing.T, cred map[string]any, id []byte) {
	t.Helper()
	resp := cred["response"].(map[string]any)
	raw, err := base64.RawURLEncoding.DecodeString(resp["attestationObject"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var att map[string]any
	if err := webauthncbor.Unmarshal(raw, &att); err != nil {
		t.Fatal(err)
	}
	ad := att["authData"].([]byte)
	const idAt = 32 + 1 + 4 + 16 + 2 // RP ID hash, flags, counter, AAGUID, id length
	if len(id) != int(binary.BigEndian.Uint16(ad[idAt-2:])) {
		t.Fatalf("credential id of %d bytes, want %d", len(id), binary.BigEndian.Uint16(ad[idAt-2:]))
	}
	copy(ad[idAt:], id)
	if raw, err = webauthncbor.Marshal(att); err != nil {
		t.Fatal(err)
	}
	resp["attestationObject"] = b64(raw)
	cred["id"], cred["rawId"] = b64(id), b64(id)
}

// testSignUpCredentialTaken: a sign-up whose credential id is one stored
// already is refused (400 passkey_already_registered), and the account it
// made for a moment is gone again.
func testSignUpCredentialTaken(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	r, _, c := e.passkeySignUp(t, e.browser(), "grace@example.com")
	wantSuccess(t, "the first sign-up", r)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/signup/begin", signUpBody("alan@example.com", "Alan"))
	cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
	withCredentialID(t, cred, c.ID)
	wantError(t, "a stored credential id", b.post(t, passkeys.Prefix+"/signup/finish", cred), auth.ErrPasskeyAlreadyRegistered)
	e.mustNoAccount(t, "alan@example.com")
	if b.signedInAs(t) != "" || len(e.audit.Of(auth.EventRegistered)) != 1 {
		t.Fatal("a refused sign-up signed in or was audited as registered")
	}
	g, err := e.users.ByEmail(context.Background(), "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if keys := e.stored(t, g.ID); len(keys) != 1 || string(keys[0].ID) != string(c.ID) {
		t.Fatalf("the first account's passkeys: %+v", keys)
	}
}

package passkeys_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
	"github.com/go-webauthn/webauthn/protocol"
)

// visit is the auth.Visit of one request of c, as an app's own handler
// makes it.
func (c *client) visit() *auth.Visit {
	req := httptest.NewRequest(http.MethodPost, origin+"/app/passkeys", nil)
	req.RemoteAddr = "192.0.2.7:4711"
	c.addCookies(req)
	return c.e.svc.Visit(auth.HTTPRequest(req, nil))
}

// keep stores the cookies v's answer sets, as the browser would.
func (c *client) keep(v *auth.Visit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ck := range v.Cookies() {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
}

// typedEnv is the env of an app's own handlers (the challenge cookie on
// "/"), with Ada signed up in the browser home, and an authenticator.
func typedEnv(t *testing.T) (e *env, a *passkeystest.Authenticator, home *client, u *user.User) {
	t.Helper()
	e = newEnv(t, func(c *passkeys.Config) { c.CookiePath = "/" }, nil)
	home, u = e.signUp("ada@example.com")
	return e, passkeystest.NewAuthenticator(t), home, u
}

// beginRegistration begins registering a passkey on v and returns the
// creation options.
func (e *env) beginRegistration(t *testing.T, v *auth.Visit) *protocol.CredentialCreation {
	t.Helper()
	opts, err := e.h.BeginRegistration(context.Background(), v)
	if err != nil {
		t.Fatalf("BeginRegistration: %v", err)
	}
	return opts
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTypedCeremonies: an app's own handlers register a passkey and sign
// in with it through the typed methods alone: the challenge cookie goes
// through the visit (with Config.CookiePath), the results are Go values,
// and the errors the routes would answer with.
func TestTypedCeremonies(t *testing.T) {
	e, a, home, u := typedEnv(t)
	ctx := context.Background()

	v := home.visit()
	opts := e.beginRegistration(t, v)
	if len(v.Cookies()) != 1 || v.Cookies()[0].Name != passkeys.ChallengeCookie || v.Cookies()[0].Path != "/" || !v.Cookies()[0].HttpOnly {
		t.Fatalf("BeginRegistration cookies %v, want the challenge cookie on /", v.Cookies())
	}
	if v.Header().Get("X-RateLimit-Remaining") != "29" {
		t.Errorf("BeginRegistration headers %v, want the begin limit's", v.Header())
	}
	home.keep(v)
	cred, _ := a.Create(marshal(t, opts), origin)

	v = home.visit()
	info, err := e.h.FinishRegistration(ctx, v, passkeys.RegistrationInput{Credential: marshal(t, cred), Name: " Laptop "})
	if err != nil || info.Name != "Laptop" || info.ID != cred["id"] || !info.CreatedAt.Equal(e.clock()) || !info.BackupEligible || !info.BackedUp {
		t.Fatalf("FinishRegistration = %+v, %v; want Laptop %s", info, err, cred["id"])
	}
	home.keep(v)
	if _, ok := home.cookies[passkeys.ChallengeCookie]; ok {
		t.Fatal("the challenge cookie outlived the finish")
	}
	if n := len(e.mails("passkey_added")); n != 1 {
		t.Fatalf("%d passkey_added notices, want 1", n)
	}

	// The same finish again: the challenge is gone.
	v = home.visit()
	if _, err := e.h.FinishRegistration(ctx, v, passkeys.RegistrationInput{Credential: marshal(t, cred)}); err != auth.ErrPasskeyChallengeInvalid {
		t.Fatalf("FinishRegistration without a ceremony: %v, want ErrPasskeyChallengeInvalid", err)
	}

	away := e.client()
	v = away.visit()
	req, err := e.h.BeginLogin(ctx, v)
	if err != nil {
		t.Fatalf("BeginLogin: %v", err)
	}
	away.keep(v)
	v = away.visit()
	got, err := e.h.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: marshal(t, a.Get(marshal(t, req), origin, nil))})
	if err != nil || got.ID != u.ID {
		t.Fatalf("FinishLogin = %v, %v; want %s", got, err, u.ID)
	}
	away.keep(v)
	if away.signedInAs() != u.ID {
		t.Fatal("FinishLogin set no session cookie on the visit")
	}

	// Not JSON at all: a typed caller gets passkey_invalid, after the
	// ceremony was taken.
	v = away.visit()
	if _, err := e.h.BeginLogin(ctx, v); err != nil {
		t.Fatal(err)
	}
	away.keep(v)
	v = away.visit()
	var ae *auth.Error
	if _, err := e.h.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: []byte("not json")}); !errors.As(err, &ae) || ae != auth.ErrPasskeyInvalid {
		t.Fatalf("FinishLogin with garbage: %v, want ErrPasskeyInvalid", err)
	}
	away.keep(v)
	if _, ok := away.cookies[passkeys.ChallengeCookie]; ok {
		t.Fatal("a refused finish kept the challenge cookie")
	}

	// 2FA without a pending login.
	if _, err := e.h.BeginTwoFactor(ctx, e.client().visit()); err != auth.ErrNoPendingTwoFactor {
		t.Fatalf("BeginTwoFactor without a pending login: %v, want ErrNoPendingTwoFactor", err)
	}
}

// TestCookiePathDefault: the challenge cookie lives under Prefix unless
// Config.CookiePath says otherwise.
func TestCookiePathDefault(t *testing.T) {
	e := newEnv(t, nil, nil)
	r := e.client().do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	want(t, "login/begin", r, http.StatusOK, "")
	if len(r.cookies) != 1 || r.cookies[0].Name != passkeys.ChallengeCookie || r.cookies[0].Path != passkeys.Prefix ||
		!r.cookies[0].HttpOnly || r.cookies[0].SameSite != http.SameSiteStrictMode || r.cookies[0].MaxAge != 300 {
		t.Fatalf("cookies %v, want the challenge cookie on %s, HttpOnly, SameSite=Strict, 300s", r.cookies, passkeys.Prefix)
	}
}

// panickyStore is the memory store with a ListPasskeys that panics, as a
// store (or go-webauthn) with a bug nobody foresaw might.
type panickyStore struct{ *store.Memory }

func (panickyStore) ListPasskeys(context.Context, string) ([]*user.Passkey, error) {
	panic("list passkeys: boom")
}

// TestCeremonyPanic: a panic inside a ceremony comes back from the typed
// method as an error (500 internal_error), never up the caller's stack, and
// the route answers 500 without the panic's text.
func TestCeremonyPanic(t *testing.T) {
	e := newEnv(t, nil, func(c *auth.Config) { c.Users = panickyStore{c.Users.(*store.Memory)} })
	home, _ := e.signUp("ada@example.com")
	_, err := e.h.BeginRegistration(context.Background(), home.visit())
	if err == nil || auth.AsError(err) != auth.ErrInternal || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("BeginRegistration with a panicking store: %v, want an error AsError maps to ErrInternal", err)
	}
	r := home.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(t, "register/begin with a panicking store", r, http.StatusInternalServerError, "internal_error")
	if strings.Contains(string(r.body), "boom") {
		t.Fatalf("the answer tells the panic: %s", r.body)
	}
}

// TestRegistrationNameFormatCharacters: FinishRegistration refuses a name
// holding Unicode format characters (a right-to-left override, an
// isolate, a zero-width space), as a user's name is refused, and stores
// nothing.
func TestRegistrationNameFormatCharacters(t *testing.T) {
	for _, name := range []string{"Laptop\u202Eexe.txt", "Work\u2066Phone\u2069", "Key\u200B"} {
		e, a, home, u := typedEnv(t)
		ctx := context.Background()
		v := home.visit()
		opts := e.beginRegistration(t, v)
		home.keep(v)
		cred, _ := a.Create(marshal(t, opts), origin)
		v = home.visit()
		_, err := e.h.FinishRegistration(ctx, v, passkeys.RegistrationInput{Credential: marshal(t, cred), Name: name})
		if !errors.Is(err, auth.ErrInvalidCharacters) {
			t.Errorf("FinishRegistration named %q: %v, want ErrInvalidCharacters", name, err)
		}
		if ps, _ := e.users.ListPasskeys(ctx, u.ID); len(ps) != 0 {
			t.Errorf("named %q: %d passkeys stored, want none", name, len(ps))
		}
	}
}

// TestTypedSignUp: an app's own handlers sign up with a passkey through
// the typed methods: the input normalised, the challenge cookie through the
// visit, the new user returned and signed in on the visit, the
// verification link mailed; the errors are the routes'.
func TestTypedSignUp(t *testing.T) {
	e := newEnv(t, func(c *passkeys.Config) { c.CookiePath = "/" }, nil)
	a := passkeystest.NewAuthenticator(t)
	ctx := context.Background()
	b := e.client()

	if _, err := e.h.BeginSignUp(ctx, b.visit(), passkeys.SignUpInput{Email: "not an address", Name: "Grace"}); err != auth.ErrInvalidEmail {
		t.Fatalf("BeginSignUp with a malformed address: %v, want ErrInvalidEmail", err)
	}
	v := b.visit()
	opts, err := e.h.BeginSignUp(ctx, v, passkeys.SignUpInput{Email: " Grace@Example.com", Name: " Grace "})
	if err != nil {
		t.Fatalf("BeginSignUp: %v", err)
	}
	if opts.Response.User.Name != "grace@example.com" || opts.Response.User.DisplayName != "Grace" ||
		opts.Response.AuthenticatorSelection.UserVerification != protocol.VerificationRequired {
		t.Fatalf("BeginSignUp options: %+v", opts.Response)
	}
	b.keep(v)
	cred, _ := a.Create(marshal(t, opts), origin)

	v = b.visit()
	u, err := e.h.FinishSignUp(ctx, v, passkeys.SignUpFinishInput{Credential: marshal(t, cred), PasskeyName: "Phone"})
	if err != nil || u.Email != "grace@example.com" || u.Name != "Grace" || u.PasswordHash != "" || u.EmailVerified() {
		t.Fatalf("FinishSignUp = %+v, %v; want grace, no password, unverified", u, err)
	}
	b.keep(v)
	if b.signedInAs() != u.ID {
		t.Fatal("FinishSignUp set no session cookie on the visit")
	}
	if ps, _ := e.users.ListPasskeys(ctx, u.ID); len(ps) != 1 || ps[0].Name != "Phone" {
		t.Fatalf("stored passkeys %+v, want one named Phone", ps)
	}
	if n := len(e.mails("verify_email")); n != 1 {
		t.Fatalf("%d verification mails, want 1", n)
	}
	if _, err := e.h.FinishSignUp(ctx, b.visit(), passkeys.SignUpFinishInput{Credential: marshal(t, cred)}); err != auth.ErrPasskeyChallengeInvalid {
		t.Fatalf("FinishSignUp without a ceremony: %v, want ErrPasskeyChallengeInvalid", err)
	}
}

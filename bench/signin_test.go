package bench_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authkit-go/authkit/bench/internal/server"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// BenchmarkSignInVerify times the verifications authkit signs a user in
// with, in one run so they compare: each is one call of its typed method
// on a Service over the memory store (rate limits off and stateless
// sessions, as internal/server's), from the call to the session cookie and
// the renewed device cookie on the visit. Serial, so 1/(ns/op) is per core.
//
//   - factor=totp: Service.VerifyTwoFactor, the second step of a pending
//     2FA login by TOTP code: the pending cookie's token, the user read, the
//     secret decrypted (XChaCha20-Poly1305), the code matched over the
//     window (three codes computed), the step accepted in the store
//     (replay protection), the session.
//   - factor=passkey-2fa: passkeys.Handler.FinishTwoFactor, the same step by
//     passkey: the challenge taken from the challenge store and decoded, the
//     pending cookie's token, the user, user handle and passkeys read, the
//     assertion parsed (JSON, CBOR), go-webauthn's checks and its ES256
//     signature check, the sign count updated in the store (a conditional
//     update), the session.
//   - factor=passkey-login: passkeys.Handler.FinishLogin, passwordless: the
//     same without a pending login, the user found by the assertion's user
//     handle.
//   - factor=webauthn: go-webauthn alone on the same kind of assertion,
//     protocol.ParseCredentialRequestResponseBytes and WebAuthn.ValidateLogin
//     with the credential in memory, nothing stored and no session: the
//     difference to passkey-2fa is what authkit adds.
//   - factor=password: Service.Login, the password step of an account
//     without 2FA at the default hasher (bcrypt, cost 12), ending in the
//     session (BenchmarkLogin's path=login without the HTTP layer).
//
// Only the call is timed. Each iteration is a new sign-in from the same
// browser, made ready with the timer stopped: for totp the clock moved two
// steps (60 s, so the code is one not used yet) and the code computed; for
// the 2FA factors the password step that leaves the pending login (on a
// Service whose hasher compares plain text, so it costs microseconds); for
// the passkey factors the begin ceremony (a fresh single-use challenge) and
// the authenticator's signature (passkeystest's, ES256); the request and
// its auth.Visit. The browser carries the device cookie of its last
// sign-in, as a returning user's does, so no new-device notice is mailed.
// cpu-ns/op is the process's CPU time during the calls (see loopTimed).
// The stopped parts add wall time, not time per op (for totp several
// times the timed part). compare.sh runs the password factor -benchtime 3x,
// as the login section, and the others 200ms.
func BenchmarkSignInVerify(b *testing.B) {
	ctx := context.Background()
	twoFA := newSignInEnv(b, plainHasher{})
	twoFA.enableTwoFactor(b)

	b.Run("factor=totp", func(b *testing.B) {
		loopTimed(b, func() func() error {
			twoFA.nextCode()
			code, err := twoFA.totp.Code(twoFA.secret, twoFA.clock.Now())
			if err != nil {
				b.Fatal(err)
			}
			v := twoFA.pending(b)
			return func() error {
				_, err := twoFA.svc.VerifyTwoFactor(ctx, v, auth.TwoFactorInput{Code: code})
				return err
			}
		})
	})
	b.Run("factor=passkey-2fa", func(b *testing.B) {
		loopTimed(b, func() func() error {
			v, assertion := twoFA.passkeyTwoFactor(b)
			return func() error {
				_, err := twoFA.pk.FinishTwoFactor(ctx, v, passkeys.TwoFactorInput{Assertion: assertion})
				return err
			}
		})
	})
	b.Run("factor=passkey-login", func(b *testing.B) {
		loopTimed(b, func() func() error {
			v, assertion := twoFA.passkeyLogin(b)
			return func() error {
				_, err := twoFA.pk.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: assertion})
				return err
			}
		})
	})
	bare := newBareWebAuthn(b)
	b.Run("factor=webauthn", func(b *testing.B) {
		loopTimed(b, func() func() error {
			sess, assertion := bare.begin(b)
			return func() error {
				parsed, err := protocol.ParseCredentialRequestResponseBytes(assertion)
				if err != nil {
					return err
				}
				_, err = bare.wa.ValidateLogin(bare.user, *sess, parsed)
				return err
			}
		})
	})

	b.Run("factor=password", func(b *testing.B) {
		hasher, err := password.New(password.Config{})
		if err != nil {
			b.Fatal(err)
		}
		pw := newSignInEnv(b, hasher) // here: its first sign-in takes a bcrypt check
		loopTimed(b, func() func() error {
			pw.browser.signOut()
			v := pw.browser.visit(pw.svc)
			return func() error {
				res, err := pw.svc.Login(ctx, v, auth.LoginInput{Email: server.Email, Password: server.Password})
				if err == nil && res.RequiresTwoFactor {
					err = errors.New("the password step asks for a second factor")
				}
				return err
			}
		})
	})
}

// loopTimed runs b's iterations: prepare, with the timer stopped, makes the
// call that is timed. A call's error fails b. Besides sec/op it reports
// cpu-ns/op, the CPU time of the process during the calls, which other
// processes on a shared machine do not inflate: all its threads, so also
// garbage collection running beside a call, some of it the untimed
// preparation's. The two reads of it (getrusage, about 0.4 µs each) are
// inside the timed part.
func loopTimed(b *testing.B, prepare func() (call func() error)) {
	b.ReportAllocs()
	var cpu int64
	for b.Loop() {
		b.StopTimer()
		call := prepare()
		b.StartTimer()
		c0 := cpuNanos()
		err := call()
		cpu += cpuNanos() - c0
		if err != nil {
			b.Fatal(err)
		}
	}
	if cpuNanos() >= 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}

// TestSignInVerify runs each verification of BenchmarkSignInVerify a few
// times, so that `go test` proves its set-up and that every call signs in,
// without timing anything. Sessions come from the session cookie the call
// sets; the password factor is left to the benchmark (bcrypt at cost 12 is
// slow under -race).
func TestSignInVerify(t *testing.T) {
	ctx := context.Background()
	e := newSignInEnv(t, plainHasher{})
	e.enableTwoFactor(t)
	for range 3 {
		e.nextCode()
		code, err := e.totp.Code(e.secret, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		v := e.pending(t)
		if res, err := e.svc.VerifyTwoFactor(ctx, v, auth.TwoFactorInput{Code: code}); err != nil || res.User.ID != e.user.ID {
			t.Fatalf("VerifyTwoFactor = %v, %v", res.User, err)
		}
		e.wantSession(t, v)

		v, assertion := e.passkeyTwoFactor(t)
		if res, err := e.pk.FinishTwoFactor(ctx, v, passkeys.TwoFactorInput{Assertion: assertion}); err != nil || res.User.ID != e.user.ID {
			t.Fatalf("FinishTwoFactor = %v, %v", res.User, err)
		}
		e.wantSession(t, v)

		v, assertion = e.passkeyLogin(t)
		if u, err := e.pk.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: assertion}); err != nil || u.ID != e.user.ID {
			t.Fatalf("FinishLogin = %v, %v", u, err)
		}
		e.wantSession(t, v)
	}
	// The challenges are single use: the last assertion again is refused.
	v, assertion := e.passkeyLogin(t)
	if _, err := e.pk.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: assertion}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pk.FinishLogin(ctx, e.browser.visit(e.svc), passkeys.LoginInput{Assertion: assertion}); err != auth.ErrPasskeyChallengeInvalid {
		t.Fatalf("a replayed finish: %v, want ErrPasskeyChallengeInvalid", err)
	}
	// The browser kept its device cookie, so no sign-in mailed a new-device
	// notice: the account's first (newSignInEnv's) mails none, and every
	// later one came from the browser that first one marked.
	if e.browser.cookies[auth.DeviceCookie] == "" {
		t.Fatalf("the browser holds no %s cookie", auth.DeviceCookie)
	}
	if n := e.newDeviceNotices(t); n != 0 {
		t.Fatalf("%d new-device notices, want 0", n)
	}

	bare := newBareWebAuthn(t)
	for range 3 {
		sess, assertion := bare.begin(t)
		parsed, err := protocol.ParseCredentialRequestResponseBytes(assertion)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bare.wa.ValidateLogin(bare.user, *sess, parsed); err != nil {
			t.Fatalf("ValidateLogin: %v", err)
		}
	}
}

// The passkeys' relying party: the benchmark's requests come from its one
// origin.
const (
	rpID     = "bench.example"
	rpOrigin = "https://bench.example"
)

// signInEnv is a Service over the memory store with the passkeys handler
// on a settable clock, and one user (server.Email) with a browser that has
// signed in once.
type signInEnv struct {
	svc     *auth.Service
	pk      *passkeys.Handler
	clock   *clock.Clock
	mail    *mail.Capture
	user    *user.User
	browser *browser
	// After enableTwoFactor: the user's TOTP secret and a TOTP with the
	// Service's settings (the defaults), and the authenticator holding
	// the user's passkey.
	totp   *totp.TOTP
	secret string
	authn  *passkeystest.Authenticator
}

func newSignInEnv(tb testing.TB, hasher password.Hasher) *signInEnv {
	tb.Helper()
	ctx := context.Background()
	e := &signInEnv{clock: clock.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)), mail: &mail.Capture{}}
	users := store.NewMemory(store.MemoryConfig{Now: e.clock.Now})
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		tb.Fatal(err)
	}
	off := auth.Off
	e.svc, err = auth.New(auth.Config{
		Users:   users,
		Secrets: []string{hex.EncodeToString(secret)},
		Keys:    keys,
		AppURL:  rpOrigin,
		Mailer:  e.mail,
		Hasher:  hasher,
		Limits: auth.Limits{
			LoginIP: off, LoginEmail: off, Register: off, ResetIP: off,
			ResetEmail: off, Resend: off, TwoFactor: off, Password: off,
		},
		Logger: slog.New(slog.DiscardHandler),
		Now:    e.clock.Now,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.svc.Close(context.Background()) })
	e.pk, err = passkeys.New(e.svc, passkeys.Config{
		RPID: rpID, Origins: []string{rpOrigin}, BeginLimit: off, Now: e.clock.Now,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.pk.Close() })

	hash, err := hasher.Hash(ctx, server.Password)
	if err != nil {
		tb.Fatal(err)
	}
	e.user, err = users.Create(ctx, &user.User{Email: server.Email, Name: "Bench", PasswordHash: hash, EmailVerifiedAt: e.clock.Now()})
	if err != nil {
		tb.Fatal(err)
	}
	e.browser = &browser{cookies: map[string]string{}}
	v := e.browser.visit(e.svc)
	if _, err := e.svc.Login(ctx, v, auth.LoginInput{Email: server.Email, Password: server.Password}); err != nil {
		tb.Fatal(err)
	}
	e.browser.keep(v)
	return e
}

// enableTwoFactor gives the user a passkey and turns TOTP on, through the
// typed methods, in the browser's session.
func (e *signInEnv) enableTwoFactor(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	e.authn = passkeystest.NewAuthenticator(tb)
	v := e.browser.visit(e.svc)
	creation, err := e.pk.BeginRegistration(ctx, v)
	if err != nil {
		tb.Fatal(err)
	}
	e.browser.keep(v)
	cred, _ := e.authn.Create(marshal(tb, creation), rpOrigin)
	v = e.browser.visit(e.svc)
	if _, err := e.pk.FinishRegistration(ctx, v, passkeys.RegistrationInput{Credential: marshal(tb, cred), Name: "Laptop"}); err != nil {
		tb.Fatal(err)
	}
	e.browser.keep(v)

	if e.totp, err = totp.New(totp.Config{}); err != nil {
		tb.Fatal(err)
	}
	// The confirming code's step is used: a code needs nextCode first.
	e.secret = e.browser.turnOnTOTP(tb, e.svc, e.totp, e.clock.Now())
}

// nextCode moves the clock two TOTP steps on, so that the code of the
// step it stops in is new: two, not one, because the step after a code's
// has a code equal to it about once in a million steps, and the check then
// records that later step as used (the newest step the code matches).
func (e *signInEnv) nextCode() { e.clock.Advance(2 * 30 * time.Second) }

// pending makes the password step of a new sign-in from the browser and
// returns the visit of the second step, holding the pending cookie.
func (e *signInEnv) pending(tb testing.TB) *auth.Visit {
	tb.Helper()
	e.browser.signOut()
	v := e.browser.visit(e.svc)
	res, err := e.svc.Login(context.Background(), v, auth.LoginInput{Email: server.Email, Password: server.Password})
	if err != nil || !res.RequiresTwoFactor {
		tb.Fatalf("password step: %+v, %v; want a pending login", res, err)
	}
	e.browser.keep(v)
	return e.browser.visit(e.svc)
}

// passkeyTwoFactor makes the password step and the passkey 2FA begin of a
// new sign-in, and returns the visit of the finish and the authenticator's
// assertion.
func (e *signInEnv) passkeyTwoFactor(tb testing.TB) (*auth.Visit, []byte) {
	tb.Helper()
	v := e.pending(tb)
	opts, err := e.pk.BeginTwoFactor(context.Background(), v)
	if err != nil {
		tb.Fatal(err)
	}
	e.browser.keep(v)
	return e.browser.visit(e.svc), marshal(tb, e.authn.Get(marshal(tb, opts), rpOrigin, nil))
}

// passkeyLogin makes the begin of a new passwordless sign-in, and returns
// the visit of the finish and the authenticator's assertion.
func (e *signInEnv) passkeyLogin(tb testing.TB) (*auth.Visit, []byte) {
	tb.Helper()
	e.browser.signOut()
	v := e.browser.visit(e.svc)
	opts, err := e.pk.BeginLogin(context.Background(), v)
	if err != nil {
		tb.Fatal(err)
	}
	e.browser.keep(v)
	return e.browser.visit(e.svc), marshal(tb, e.authn.Get(marshal(tb, opts), rpOrigin, nil))
}

// newDeviceNotices returns how many new-device notices were mailed.
func (e *signInEnv) newDeviceNotices(tb testing.TB) int {
	tb.Helper()
	if err := e.svc.FlushMail(context.Background()); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, m := range e.mail.Messages() {
		if m.Kind == mail.KindNewSignIn {
			n++
		}
	}
	return n
}

// wantSession fails tb unless v's answer signed the user in.
func (e *signInEnv) wantSession(tb testing.TB, v *auth.Visit) {
	tb.Helper()
	e.browser.keep(v)
	r := httptest.NewRequest(http.MethodGet, rpOrigin+"/", nil)
	e.browser.addCookies(r)
	u, err := e.svc.CurrentUser(context.Background(), e.svc.Visit(auth.HTTPRequest(r, nil)))
	if err != nil || u.ID != e.user.ID {
		tb.Fatalf("after the sign-in: CurrentUser = %v, %v", u, err)
	}
}

// browser is one browser's cookies, carried from visit to visit.
type browser struct {
	cookies map[string]string
	// last is the visit made last, whose answer signOut keeps first (a
	// timed call's: the renewed device cookie).
	last *auth.Visit
}

func (br *browser) addCookies(r *http.Request) {
	for k, v := range br.cookies {
		r.AddCookie(&http.Cookie{Name: k, Value: v})
	}
}

// visit returns the auth.Visit of a request from the browser.
func (br *browser) visit(svc *auth.Service) *auth.Visit {
	r := httptest.NewRequest(http.MethodPost, rpOrigin+"/", nil)
	r.RemoteAddr = "192.0.2.7:40000"
	r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0")
	br.addCookies(r)
	br.last = svc.Visit(auth.HTTPRequest(r, nil))
	return br.last
}

// keep stores the cookies v's answer set, as the browser would.
func (br *browser) keep(v *auth.Visit) {
	for _, ck := range v.Cookies() {
		if ck.MaxAge < 0 {
			delete(br.cookies, ck.Name)
		} else {
			br.cookies[ck.Name] = ck.Value
		}
	}
}

// signOut keeps the answer of the last visit, then forgets every cookie
// but the device cookie: the browser of a returning user, signed out.
func (br *browser) signOut() {
	if br.last != nil {
		br.keep(br.last)
		br.last = nil
	}
	for k := range br.cookies {
		if k != auth.DeviceCookie {
			delete(br.cookies, k)
		}
	}
}

// turnOnTOTP turns TOTP on for the browser's signed-in user through the
// typed methods (SetupTwoFactor, then ConfirmTwoFactor with the code of
// now) and returns the secret.
func (br *browser) turnOnTOTP(tb testing.TB, svc *auth.Service, gen *totp.TOTP, now time.Time) string {
	tb.Helper()
	ctx := context.Background()
	v := br.visit(svc)
	setup, err := svc.SetupTwoFactor(ctx, v)
	if err != nil {
		tb.Fatal(err)
	}
	br.keep(v)
	uri, err := url.Parse(setup.URI)
	if err != nil {
		tb.Fatal(err)
	}
	secret := uri.Query().Get("secret")
	code, err := gen.Code(secret, now)
	if err != nil {
		tb.Fatal(err)
	}
	v = br.visit(svc)
	if _, err := svc.ConfirmTwoFactor(ctx, v, auth.ConfirmTwoFactorInput{Code: code}); err != nil {
		tb.Fatal(err)
	}
	br.keep(v)
	return secret
}

func marshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// plainHasher "hashes" a password as itself, so that the password step
// before a second factor costs microseconds. For this benchmark only.
type plainHasher struct{}

func (plainHasher) Hash(_ context.Context, pw string) (string, error) { return "plain:" + pw, nil }
func (plainHasher) Verify(_ context.Context, pw, hash string) (bool, error) {
	return subtle.ConstantTimeCompare([]byte("plain:"+pw), []byte(hash)) == 1, nil
}

// bareWebAuthn is go-webauthn with one user and one credential in memory,
// configured as the passkeys handler configures it.
type bareWebAuthn struct {
	wa    *webauthn.WebAuthn
	user  *bareUser
	authn *passkeystest.Authenticator
}

type bareUser struct {
	id    []byte
	creds []webauthn.Credential
}

func (u *bareUser) WebAuthnID() []byte                         { return u.id }
func (u *bareUser) WebAuthnName() string                       { return server.Email }
func (u *bareUser) WebAuthnDisplayName() string                { return "Bench" }
func (u *bareUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

func newBareWebAuthn(tb testing.TB) *bareWebAuthn {
	tb.Helper()
	wa, err := webauthn.New(&webauthn.Config{
		RPID: rpID, RPDisplayName: rpID, RPOrigins: []string{rpOrigin},
		AttestationPreference: protocol.PreferNoAttestation,
	})
	if err != nil {
		tb.Fatal(err)
	}
	w := &bareWebAuthn{wa: wa, user: &bareUser{id: make([]byte, 32)}, authn: passkeystest.NewAuthenticator(tb)}
	_, _ = rand.Read(w.user.id) // never fails (crypto/rand)
	creation, sess, err := wa.BeginRegistration(w.user)
	if err != nil {
		tb.Fatal(err)
	}
	cred, _ := w.authn.Create(marshal(tb, creation), rpOrigin)
	parsed, err := protocol.ParseCredentialCreationResponseBytes(marshal(tb, cred))
	if err != nil {
		tb.Fatal(err)
	}
	c, err := wa.CreateCredential(w.user, *sess, parsed)
	if err != nil {
		tb.Fatal(err)
	}
	w.user.creds = []webauthn.Credential{*c}
	return w
}

// begin returns a new login ceremony's session data and the
// authenticator's assertion for it.
func (w *bareWebAuthn) begin(tb testing.TB) (*webauthn.SessionData, []byte) {
	tb.Helper()
	opts, sess, err := w.wa.BeginLogin(w.user, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		tb.Fatal(err)
	}
	return sess, marshal(tb, w.authn.Get(marshal(tb, opts), rpOrigin, nil))
}

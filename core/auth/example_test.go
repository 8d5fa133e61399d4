package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// yourStore stands for the app's user store (store.NewMemory, an sqlx
// store, or a custom user.Store).
type yourStore struct{ user.Store }

func ExampleModules_Routes() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   yourStore{},
		Secrets: []string{strings.Repeat("x", 32)}, // SESSION_SECRET: at least 32 random bytes
		Keys:    keys,
		AppURL:  "https://app.example.com",
	})
	if err != nil {
		panic(err)
	}
	for _, rt := range svc.Modules().Routes() {
		fmt.Println(rt.Method, rt.Pattern)
	}
	// Output:
	// POST /api/2fa/setup
	// POST /api/2fa/confirm
	// POST /api/login
	// POST /api/auth/login
	// POST /api/2fa/verify
	// POST /api/2fa/recover
	// POST /api/2fa/regenerate-codes
	// POST /api/2fa/disable
	// POST /api/auth/register
	// GET /api/auth/verify-email/{token}
	// POST /api/auth/resend-verification
	// POST /api/auth/change-email
	// POST /api/auth/forgot-password
	// POST /api/auth/reset-password/{token}
	// POST /api/auth/logout
	// POST /api/auth/logout-all
	// GET /api/auth/me
	// POST /api/auth/change-password
	// POST /api/auth/confirm-password
	// POST /api/auth/delete-account
	// GET /api/auth/export
}

// An app that checks passwords itself (its own users table, a directory)
// and keeps its own sessions still uses authkit's second factors: after its
// own check it starts authkit's second step for the user id, and signs the
// user in itself once authkit has verified the second factor.
func ExampleService_StartSecondStep() {
	var svc *auth.Service                                                         // made once with auth.New
	checkOwnPassword := func(r *http.Request) (string, bool) { return "", false } // the app's own check
	startOwnSession := func(w http.ResponseWriter, userID string) {}              // the app's own session
	login := func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkOwnPassword(r)
		if !ok {
			http.Error(w, "Invalid credentials", http.StatusUnauthorized)
			return
		}
		v := svc.Visit(nethttpRequest(r))
		res, err := svc.StartSecondStep(r.Context(), v, auth.SecondStepInput{UserID: id, OwnSession: true})
		v.WriteHeaders(w) // the 2fa_pending cookie when a second factor follows
		switch {
		case err != nil:
			e := auth.AsError(err)
			http.Error(w, e.Message, e.Status)
		case res.RequiresTwoFactor:
			http.Redirect(w, r, "/2fa", http.StatusSeeOther)
		default:
			startOwnSession(w, res.User.ID)
			http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
		}
	}
	secondStep := func(w http.ResponseWriter, r *http.Request) {
		v := svc.Visit(nethttpRequest(r))
		res, err := svc.VerifyTwoFactor(r.Context(), v, auth.TwoFactorInput{Code: r.PostFormValue("code")})
		v.WriteHeaders(w) // the pending cookie expired; no authkit session
		if err != nil {
			e := auth.AsError(err)
			http.Error(w, e.Message, e.Status)
			return
		}
		startOwnSession(w, res.User.ID)
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	}
	_, _ = login, secondStep // mounted as the app's POST /login and POST /2fa
}

// An app with pages of its own calls the flows from Go: a Visit per
// request, a typed method, the visit's cookies and headers written on the
// app's own response, and the error matched by its code.
func ExampleService_Login() {
	var svc *auth.Service // made once with auth.New
	login := func(w http.ResponseWriter, r *http.Request) {
		v := svc.Visit(nethttpRequest(r)) // nethttpauth.Request(r) in an app
		res, err := svc.Login(r.Context(), v, auth.LoginInput{
			Email: r.PostFormValue("email"), Password: r.PostFormValue("password"),
		})
		v.WriteHeaders(w) // the session or 2fa_pending cookie, the rate-limit headers
		switch {
		case errors.Is(err, auth.ErrInvalidCredentials):
			w.WriteHeader(http.StatusUnauthorized) // and the login page again, with the message
		case err != nil:
			e := auth.AsError(err) // a 429 with its RetryAfter, a 503, ...
			http.Error(w, e.Message, e.Status)
		case res.RequiresTwoFactor:
			http.Redirect(w, r, "/2fa", http.StatusSeeOther)
		default:
			http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
		}
	}
	_ = login
}

// nethttpRequest stands for nethttpauth.Request, which core cannot import.
func nethttpRequest(r *http.Request) auth.Request { return auth.HTTPRequest(r, nil) }

// Email codes are off by default. An app that offers them as a fallback
// second factor switches them on; the store must implement
// user.EmailCodes. Their two routes are then listed with the others, and
// the second step of an app's own pages calls the typed methods.
func ExampleEmailCodeConfig() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	type yourStoreWithCodes struct {
		user.Store
		user.EmailCodes // store.NewMemory and sqlxstore's UserStore have it
	}
	svc, err := auth.New(auth.Config{
		Users:     yourStoreWithCodes{},
		Secrets:   []string{strings.Repeat("x", 32)},
		Keys:      keys,
		AppURL:    "https://app.example.com",
		EmailCode: auth.EmailCodeConfig{Enabled: true}, // codes live 10 minutes unless Lifetime says otherwise
	})
	if err != nil {
		panic(err)
	}
	for _, rt := range svc.Modules().Routes() {
		if strings.Contains(rt.Pattern, "email-code") {
			fmt.Println(rt.Method, rt.Pattern)
		}
	}
	// On the app's 2FA page: "Email me a code" posts here ...
	send := func(w http.ResponseWriter, r *http.Request) {
		v := svc.Visit(nethttpRequest(r))
		err := svc.SendTwoFactorEmailCode(r.Context(), v)
		v.WriteHeaders(w)
		if errors.Is(err, auth.ErrEmailCodeNeedsVerifiedEmail) {
			http.Error(w, "Use your authenticator app", http.StatusForbidden)
		}
	}
	// ... and the form with the mailed code here.
	verify := func(w http.ResponseWriter, r *http.Request) {
		v := svc.Visit(nethttpRequest(r))
		_, err := svc.VerifyTwoFactorEmailCode(r.Context(), v, auth.TwoFactorInput{Code: r.PostFormValue("code")})
		v.WriteHeaders(w) // the session cookie, or nothing: the pending cookie stays on an error
		if err != nil {
			http.Error(w, auth.AsError(err).Message, auth.AsError(err).Status)
			return
		}
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	}
	_, _ = send, verify
	// Output:
	// POST /api/2fa/email-code
	// POST /api/2fa/email-code/verify
}

// A support tool over the app's stores: unlock an account and say what was
// done. Every change is audited with the actor.
func ExampleNewSupport() {
	users := store.NewMemory(store.MemoryConfig{})
	ada, _ := users.Create(context.Background(), &user.User{Email: "ada@example.com", PasswordHash: "h"})
	_, _, _ = users.RecordLoginFailure(context.Background(), ada.ID, 1, time.Hour, time.Now())

	sp, err := auth.NewSupport(auth.SupportConfig{
		Users: users,
		Audit: func(_ context.Context, e auth.Event) { fmt.Println("audit:", e.Type, "by", e.Detail) },
	})
	if err != nil {
		panic(err)
	}
	a, _ := sp.Find(context.Background(), "ada@example.com")
	fmt.Println("locked:", a.Locked(time.Now()))
	wasLocked, _ := sp.Unlock(context.Background(), a.ID, "carol: ticket 4711")
	fmt.Println("was locked:", wasLocked)
	// Output:
	// locked: true
	// audit: support_account_unlocked by carol: ticket 4711
	// was locked: true
}

// The OpenAPI document of a Service with registration switched off: its
// route is not in the document, as it is not registered.
func ExampleService_OpenAPI() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   yourStore{},
		Secrets: []string{strings.Repeat("x", 32)},
		Keys:    keys,
		AppURL:  "https://app.example.com",
		Disable: []auth.Feature{auth.FeatureRegistration},
	})
	if err != nil {
		panic(err)
	}
	doc, err := svc.OpenAPI() // serve it, e.g. at GET /api/openapi.json
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(string(doc), `"openapi": "3.1.0"`))
	fmt.Println(strings.Contains(string(doc), `"/api/auth/login"`))
	fmt.Println(strings.Contains(string(doc), `"/api/auth/register"`))
	// Output:
	// true
	// true
	// false
}

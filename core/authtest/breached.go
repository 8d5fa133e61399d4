package authtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
)

// Breached passwords (ASVS 2.1.7): Config.PasswordChecker refuses, on
// registration, reset and change, a password the Have I Been Pwned range
// API knows (here a local server that speaks it) or a list of common
// passwords holds; when the API cannot be reached the password goes
// through unless the app fails closed.

const (
	errPasswordBreached = "This password has appeared in a data breach or is too common. Choose a different password."
	breachedPassword    = "breached passphrase 2024" // known to the suite's range server
	commonPassword      = "Common Passphrase"        // on the suite's list, as "common passphrase"
)

// rangeAPI is a local Pwned Passwords range API that knows
// breachedPassword; it counts its requests, and answers 503 while down.
type rangeAPI struct {
	url  string
	hits atomic.Int32
	down atomic.Bool
}

func newRangeAPI(t *testing.T) *rangeAPI {
	t.Helper()
	sum := sha1.Sum([]byte(breachedPassword))
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	api := &rangeAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.hits.Add(1)
		if api.down.Load() || r.Header.Get("Add-Padding") != "true" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "%035X:0\r\n", 7) // padding
		if r.URL.Path == "/range/"+h[:5] {
			fmt.Fprintf(w, "%s:42\r\n", h[5:])
		}
	}))
	t.Cleanup(srv.Close)
	api.url = srv.URL + "/range/"
	return api
}

// withChecker is the option that checks passwords against api and the
// suite's list of common passwords.
func withChecker(t *testing.T, api *rangeAPI, failClosed bool) option {
	pwned, err := password.NewPwned(password.PwnedConfig{BaseURL: api.url})
	if err != nil {
		t.Fatalf("NewPwned: %v", err)
	}
	return func(c *auth.Config) {
		c.PasswordChecker = password.AnyOf(password.NewList([]string{"common passphrase"}), pwned)
		c.PasswordCheckFailClosed = failClosed
	}
}

func (s suite) breachedRegister(t *testing.T) {
	api := newRangeAPI(t)
	e := s.env(t, withChecker(t, api, false))
	for _, pw := range []string{breachedPassword, commonPassword} {
		r := e.client().post("/api/auth/register", obj{"email": "ada@example.com", "password": pw, "name": "Ada"})
		mustStatus(t, r, http.StatusBadRequest, errPasswordBreached)
		if r.str("code") != "password_breached" || r.setCookie(sessionCookie) != nil {
			t.Errorf("%s: want code password_breached and no session", r)
		}
	}
	e.noUser(t, "ada@example.com")
	if n := e.mailCount(t); n != 0 {
		t.Errorf("%d mails sent for refused registrations", n)
	}
	if api.hits.Load() == 0 {
		t.Errorf("the range API was never asked")
	}
	e.signup(t, e.client(), "ada@example.com") // goodPassword is neither breached nor common
}

func (s suite) breachedResetAndChange(t *testing.T) {
	api := newRangeAPI(t)
	e := s.env(t, withChecker(t, api, false))
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	for _, pw := range []string{breachedPassword, commonPassword} {
		mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": pw}),
			http.StatusBadRequest, errPasswordBreached)
		tok := e.resetToken(t, "ada@example.com")
		mustStatus(t, e.client().post("/api/auth/reset-password/"+tok, obj{"password": pw, "confirmPassword": pw}),
			http.StatusBadRequest, errPasswordBreached)
	}
	if got := e.byID(t, u.ID); got.PasswordHash != u.PasswordHash || !got.PasswordChangedAt.IsZero() {
		t.Errorf("store: a refused password replaced the old one")
	}
	mustBeSignedIn(t, c, "ada@example.com")
	mustLogin(t, e.client(), "ada@example.com", goodPassword)
	if n := len(e.mails(t, "ada@example.com", mail.KindPasswordChanged)) + len(e.mails(t, "ada@example.com", mail.KindPasswordResetDone)); n != 0 {
		t.Errorf("%d password notices for refused changes", n)
	}
	mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}), msgPasswordChanged)
}

func (s suite) breachedAPIDown(t *testing.T) {
	api := newRangeAPI(t)
	api.down.Store(true)
	e := s.env(t, withChecker(t, api, false))
	e.signup(t, e.client(), "ada@example.com")
	// The list still answers while the API is down.
	mustStatus(t, e.client().post("/api/auth/register", obj{"email": "bob@example.com", "password": commonPassword, "name": "Bob"}),
		http.StatusBadRequest, errPasswordBreached)

	// A second Service may share the first one's store (a database in the
	// store matrix): a new address.
	closed := s.env(t, withChecker(t, api, true))
	r := closed.client().post("/api/auth/register", obj{"email": "carol@example.com", "password": goodPassword, "name": "Carol"})
	mustStatus(t, r, http.StatusServiceUnavailable, "Service temporarily unavailable. Try again later.")
	closed.noUser(t, "carol@example.com")
}

package authtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// The classes of bug that the advisories of comparable projects
// (2024-2026) show recurring, one case each: what the class is, and the
// check that keeps authkit out of it on every framework. The passwordless
// passkey way in is the passkey suite's (passkeys/passkeystest, signin.go:
// an assertion without user verification signs nobody in, so a passkey is
// every factor at once).
var advisoryTests = []test{
	// better-auth GHSA-xg6x-h9c9-2m83.
	{"nothing minted before the second step is accepted anywhere", suite.advisoryNothingBeforeSecondStep},
	// Kratos GHSA-wc43-73w7-x2f5.
	{"2FA makes the second step required on every way in", suite.advisorySecondStepEveryWay},
	// zitadel GHSA-2wmj-46rj-qm2w.
	{"mailed links come from AppURL whatever the request's host headers say", suite.advisoryLinksFromAppURL},
	// better-auth CVE-2025-71399.
	{"path variants reach the route's own limiter key or a 404", suite.advisoryPathVariants},
	// allauth CVE-2026-97764.
	{"email limiter keys fold as the user lookup does", suite.advisoryEmailFolding},
	// better-auth CVE-2025-61928.
	{"fields naming another user are ignored on every authenticated route", suite.advisoryUserFieldsIgnored},
	// NIST SP 800-63B rev. 4, 3.1.3.3.
	{"a new code or a new login does not reset the 2FA failure count", suite.advisoryResendKeepsCount},
}

// wideEnv is env with every optional route the harness can serve: email
// codes where the store holds them, session records and trusted devices
// where the harness has a record store, and relaxed limits.
func (s suite) wideEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	all := []option{emailCodesWhereStored, relaxed}
	if s.h.NewSessions != nil {
		all = append(all, func(c *auth.Config) {
			c.Sessions = s.h.NewSessions(t, c.Now)
			c.TrustedDevices = s.h.NewSessions(t, c.Now)
		})
	}
	return s.env(t, append(all, opts...)...)
}

// errNotFound is the text of a path no route serves.
const errNotFound = "Not found"

// routePath is a route's pattern with its parameters filled in.
func routePath(pattern string) string {
	return strings.NewReplacer("{token}", "tok", "{id}", "0123456789abcdef0123456789abcdef").Replace(pattern)
}

// sessionRoutes returns the routes of svc that need a session.
func sessionRoutes(svc *auth.Service) []auth.Route {
	var out []auth.Route
	for _, rt := range svc.Modules().Routes() {
		if op, ok := rt.Operation(); ok && op.Auth == "session" {
			out = append(out, rt)
		}
	}
	return out
}

func (s suite) advisoryNothingBeforeSecondStep(t *testing.T) {
	e := s.wideEnv(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	e.verifyEmailFromMail(t, c, "ada@example.com")
	e.enable2FA(t, c)

	// The password step with remember and trustDevice asked for: only the
	// pending cookie comes back.
	b := e.client()
	r := b.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword, "remember": true, "trustDevice": true})
	mustBody(t, r, obj{"requiresTwoFactor": true})
	for _, name := range []string{sessionCookie, auth.TrustedDeviceCookie} {
		if ck := r.setCookie(name); ck != nil && ck.Value != "" {
			t.Errorf("%s: sets %s before the second step", r, name)
		}
	}
	pending := b.cookie(auth.PendingCookie)
	if pending == nil {
		t.Fatalf("%s: no %s cookie", r, auth.PendingCookie)
	}
	if _, ok := e.users.(user.EmailCodes); ok {
		// Asking for an email code changes nothing of that either.
		mustMessage(t, b.post(emailCodePath, nil), msgEmailCodeSent)
	}
	// The pending cookie, and its value planted as the session and the
	// trusted-device cookie, open no route that needs a session.
	planted := e.client()
	planted.setCookie(sessionCookie, pending.Value)
	planted.setCookie(auth.TrustedDeviceCookie, pending.Value)
	routes := sessionRoutes(e.svc)
	if len(routes) < 8 {
		t.Fatalf("%d routes need a session, want the table's (at least 8)", len(routes))
	}
	for _, who := range []*client{b, planted} {
		for _, rt := range routes {
			r := who.do(rt.Method, routePath(rt.Pattern), "application/json", []byte(`{"password":"`+goodPassword+`","code":"000000"}`))
			mustStatus(t, r, http.StatusUnauthorized, errNotAuthenticated)
		}
	}
	// The planted trusted-device cookie does not skip the second step.
	mustBody(t, planted.login("ada@example.com", goodPassword), obj{"requiresTwoFactor": true})
	mustBeSignedOut(t, b)
	mustBeSignedOut(t, planted)
}

func (s suite) advisorySecondStepEveryWay(t *testing.T) {
	e := s.wideEnv(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	e.verifyEmailFromMail(t, c, "ada@example.com")
	secret, _ := e.enable2FA(t, c)

	ways := []struct {
		name  string
		login func(b *client) *reply
	}{
		{"/api/login", func(b *client) *reply { return b.login("ada@example.com", goodPassword) }},
		{"/api/auth/login", func(b *client) *reply {
			return b.post("/api/auth/login", obj{"email": "ada@example.com", "password": goodPassword})
		}},
		{"a form post", func(b *client) *reply {
			return b.postForm("/api/login", url.Values{"email": {"ada@example.com"}, "password": {goodPassword}})
		}},
		{"remember", func(b *client) *reply {
			return b.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword, "remember": true})
		}},
		{"an upper-case address", func(b *client) *reply { return b.login("ADA@Example.COM", goodPassword) }},
	}
	for _, w := range ways {
		b := e.client()
		mustBody(t, w.login(b), obj{"requiresTwoFactor": true})
		mustBeSignedOut(t, b)
	}

	// Reset then login: the reset signs nobody in, and the new password
	// is only the first step.
	tok := e.resetToken(t, "ada@example.com")
	b := e.client()
	r := b.post("/api/auth/reset-password/"+url.PathEscape(tok), obj{"password": newPassword, "confirmPassword": newPassword})
	mustMessage(t, r, msgPasswordReset)
	if ck := r.setCookie(sessionCookie); ck != nil && ck.Value != "" {
		t.Errorf("%s: a reset sets a session cookie", r)
	}
	mustBeSignedOut(t, b)
	mustBody(t, b.login("ada@example.com", newPassword), obj{"requiresTwoFactor": true})
	mustBeSignedOut(t, b)
	e.nextStep()
	mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
	mustBeSignedIn(t, b, "ada@example.com")
	// Registering the address again is no way in either.
	d := e.client()
	mustStatus(t, d.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Eve"}), http.StatusBadRequest, errEmailRegistered)
	mustBeSignedOut(t, d)
}

// hostRequest sends a JSON POST with the given Host and extra headers,
// without the suite's checks: a server may refuse a hostile Host before
// authkit sees it.
func (c *client) hostRequest(path, host string, body obj, hdr ...string) {
	c.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.e.base+path, bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	if err := setHeaders(req, hdr); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.read(req, path); err != nil {
		c.t.Fatalf("authtest: POST %s: %v", path, err)
	}
}

func (s suite) advisoryLinksFromAppURL(t *testing.T) {
	// Behind a proxy the suite trusts, so that forwarded headers are read
	// where any are.
	e := s.wideEnv(t, func(c *auth.Config) { c.Proxies = clientip.TrustAll() })
	tricks := []struct {
		name string
		host string
		hdr  []string
	}{
		{"Host", "evil.test", nil},
		{"Host with a port", "evil.test:8443", nil},
		{"X-Forwarded-Host", "", []string{"X-Forwarded-Host", "evil.test", "X-Forwarded-Proto", "https"}},
		{"Forwarded", "", []string{"Forwarded", `host=evil.test;proto=https`}},
		{"X-Original-Host and X-Host", "", []string{"X-Original-Host", "evil.test", "X-Host", "evil.test"}},
		{"userinfo in Host", "app.test@evil.test", nil},
		{"every one at once", "evil.test", []string{"X-Forwarded-Host", "evil.test", "Forwarded", "host=evil.test"}},
	}
	for i, tr := range tricks {
		addr := fmt.Sprintf("user%d@example.com", i)
		c := e.client()
		c.hostRequest("/api/auth/register", tr.host, obj{"email": addr, "password": goodPassword, "name": "Ada"}, tr.hdr...)
		if _, err := e.users.ByEmail(e.ctx(), addr); err != nil {
			// The server refused the Host before authkit; register plainly
			// so the other flows still run under the trick.
			e.signup(t, c, addr)
		}
		if c.cookie(sessionCookie) == nil {
			// The jar keeps cookies by the Host a request named.
			mustLogin(t, c, addr, goodPassword)
		}
		c.hostRequest("/api/auth/resend-verification", tr.host, obj{}, tr.hdr...)
		e.client().hostRequest("/api/auth/forgot-password", tr.host, obj{"email": addr}, tr.hdr...)
		c.hostRequest("/api/auth/change-email", tr.host, obj{"newEmail": "new" + addr, "password": goodPassword}, tr.hdr...)
	}
	e.flush(t)
	links := 0
	for _, m := range e.mail.Messages() {
		if m.Link != "" {
			links++
			if !strings.HasPrefix(m.Link, appURL+"/") {
				t.Errorf("%s mail to %s: link %q, want one under %s", m.Kind, m.To, m.Link, appURL)
			}
		}
		for _, part := range []string{m.Subject, m.Text, m.HTML} {
			if strings.Contains(part, "evil.test") {
				t.Errorf("%s mail to %s names evil.test:\n%s", m.Kind, m.To, part)
			}
		}
	}
	// Each trick: a verification, a resend, a reset and a change's
	// verification link at least where the server let the request through.
	if links < len(tricks)*2 {
		t.Errorf("%d mails with a link, want at least %d", links, len(tricks)*2)
	}
}

func (s suite) advisoryPathVariants(t *testing.T) {
	e := s.env(t, relaxed, func(c *auth.Config) {
		c.Limits.LoginEmail = auth.Limit{Max: 5, Window: 15 * time.Minute}
	})
	e.seed(t, "ada@example.com")
	c := e.client()
	c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	body := []byte(`{"email":"ada@example.com","password":"` + wrongPassword + `"}`)
	variants := []string{
		"//api/login", "/api//login", "/api/login/", "/api/login//", "/API/LOGIN", "/Api/Login", "/api/LOGIN",
		"/api%2flogin", "/api%2Flogin", "/%61pi/login", "/api/logi%6e", "/api/./login",
		"/api/x/../login", "/api/login%2f", "/api/login;", "/api/login%00", "/api/login%20",
		"//api/auth/login", "/api/auth/login/", "/API/AUTH/LOGIN", "/api/auth%2flogin",
	}
	reached := 0
	for _, v := range variants {
		req, err := http.NewRequest(http.MethodPost, e.base+"/", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = "//" + req.URL.Host + v // sent exactly as written
		req.Header.Set("Content-Type", "application/json")
		r, err := c.read(req, v)
		if err != nil {
			t.Fatalf("POST %s: %v", v, err)
		}
		switch {
		case r.Status == http.StatusUnauthorized && r.str("error") == errInvalidCredentials,
			r.Status == http.StatusTooManyRequests && r.str("error") == msgTooManyLogins:
			reached++
		case r.Status == http.StatusNotFound:
			wantErrorBody(t, r.req, r.Reply, errNotFound)
		case r.Status == http.StatusMethodNotAllowed:
			wantErrorBody(t, r.req, r.Reply, errMethodNotAllowed)
		case r.Status == http.StatusBadRequest && r.JSON == nil && r.Header.Get("Content-Type") != "application/json":
			// Refused by the server's own parser before any route.
		default:
			t.Errorf("%s: want the login route's answer or a 404", r)
		}
	}
	// Every variant that reached the login route counted on ada's one
	// email key: the canonical path has exactly what is left of the 5.
	left := max(0, 5-reached)
	for i := range left {
		if r := c.login("ada@example.com", wrongPassword); r.Status != http.StatusUnauthorized {
			t.Fatalf("after %d variants reached the route, wrong login %d: %s, want 401", reached, i+1, r)
		}
	}
	e.mustLimited(t, c.login("ada@example.com", goodPassword), msgTooManyLogins, start.Add(15*time.Minute))
}

// emailSpellings are spellings of kate@example.com that the user lookup
// folds to it: case, full-width forms (NFKC), the Kelvin sign (U+212A),
// surrounding spaces.
var emailSpellings = []string{
	"KATE@EXAMPLE.COM",
	"\uff4b\uff41\uff54\uff45@example.com",      // full-width kate
	"\uff2b\uff21\uff34\uff25@\uff25xample.com", // full-width KATE, E
	"\u212aate@example.com",                     // Kelvin sign
	"kate@ｅｘａｍｐｌｅ.ｃｏｍ",
	" Kate@Example.com ",
}

func (s suite) advisoryEmailFolding(t *testing.T) {
	e := s.env(t, relaxed, func(c *auth.Config) {
		c.Limits.LoginEmail = auth.Limit{Max: 5, Window: 15 * time.Minute}
		c.Limits.ResetEmail = auth.Limit{Max: 3, Window: 15 * time.Minute}
	})
	e.seed(t, "kate@example.com")
	// Each spelling finds kate: the lookup folds it.
	for _, sp := range emailSpellings {
		c := e.client()
		mustLogin(t, c, sp, goodPassword)
		mustBeSignedIn(t, c, "kate@example.com")
	}
	// And counts on kate's one key: five wrong passwords, whatever the
	// spelling, and the sixth login is refused.
	c := e.client()
	for _, sp := range emailSpellings[:5] {
		mustStatus(t, c.login(sp, wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	e.mustLimited(t, c.login("kate@example.com", goodPassword), msgTooManyLogins, start.Add(15*time.Minute))
	for _, sp := range emailSpellings {
		e.mustLimited(t, e.client().login(sp, goodPassword), msgTooManyLogins, start.Add(15*time.Minute))
	}
	// Reset mail: three per address, whatever the spelling.
	mailed := e.mailCount(t)
	for _, sp := range emailSpellings {
		mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": sp}), msgForgotSent)
	}
	if n := len(e.mails(t, "kate@example.com", mail.KindResetPassword)); n != 3 {
		t.Errorf("%d reset mails to kate@example.com, want 3", n)
	}
	if n := e.mailCount(t) - mailed; n != 3 {
		t.Errorf("%d mails in all, want 3 (every spelling mails kate@example.com)", n)
	}
}

func (s suite) advisoryUserFieldsIgnored(t *testing.T) {
	e := s.wideEnv(t)
	victim := e.seed(t, "victim@example.com")
	vc := e.loggedIn(t, "victim@example.com")
	before := e.byID(t, victim.ID)
	e.flush(t)
	mailsBefore := len(e.mail.To("victim@example.com"))
	naming := obj{
		"userId": victim.ID, "user_id": victim.ID, "id": victim.ID, "uid": victim.ID, "sub": victim.ID,
		"email": victim.Email, "userEmail": victim.Email, "user": obj{"id": victim.ID, "email": victim.Email},
	}
	routes := sessionRoutes(e.svc)
	for i, rt := range routes {
		addr := fmt.Sprintf("attacker%d@example.com", i)
		e.seed(t, addr)
		a := e.loggedIn(t, addr)
		body := obj{"password": goodPassword, "currentPassword": goodPassword, "newPassword": newPassword,
			"newEmail": "new" + addr, "code": "000000"}
		for k, v := range naming {
			body[k] = v
		}
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r := a.do(rt.Method, routePath(rt.Pattern), "application/json", b)
		if r.Status >= 500 {
			t.Errorf("%s: %d", r, r.Status)
		}
		if strings.Contains(r.Body, victim.ID) || strings.Contains(r.Body, victim.Email) {
			t.Errorf("%s: the answer names the victim", r)
		}
		if rt.Pattern == "/api/auth/me" {
			mustBeSignedIn(t, a, addr)
		}
	}
	e.mustUnchanged(t, before)
	mustBeSignedIn(t, vc, "victim@example.com")
	e.flush(t)
	if got := e.mail.To("victim@example.com"); len(got) != mailsBefore {
		t.Errorf("%d mails to the victim, want %d", len(got), mailsBefore)
	}
}

func (s suite) advisoryResendKeepsCount(t *testing.T) {
	t.Run("a new login", func(t *testing.T) {
		e := s.env(t)
		c := e.client()
		e.signup(t, c, "ada@example.com")
		secret, _ := e.enable2FA(t, c)
		begin := e.clock.Now()
		b := e.pending(t)
		for range 4 {
			mustStatus(t, b.verify(e.wrongCode(t, secret)), http.StatusBadRequest, errInvalid2FACode)
		}
		// A new password step mints a new pending cookie; the count is the
		// user's, not the cookie's.
		b = e.pending(t)
		mustStatus(t, b.verify(e.wrongCode(t, secret)), http.StatusBadRequest, errInvalid2FACode)
		e.nextStep()
		e.mustLimited(t, b.verify(e.now(t, secret)), msgTooMany2FA, begin.Add(5*time.Minute))
		mustBeSignedOut(t, b)
	})
	t.Run("a new email code", func(t *testing.T) {
		e := s.codeEnv(t)
		e.codeUser(t)
		begin := e.clock.Now()
		b := e.pending(t)
		code := e.sendCode(t, b, "ada@example.com")
		bad := code
		for range 4 {
			bad = otherCode(bad)
			mustStatus(t, b.verifyCode(bad), http.StatusBadRequest, errInvalid2FACode)
		}
		// The resend replaces the code; the failures stay.
		code = e.sendCode(t, b, "ada@example.com")
		mustStatus(t, b.verifyCode(otherCode(code)), http.StatusBadRequest, errInvalid2FACode)
		e.mustLimited(t, b.verifyCode(code), msgTooMany2FA, begin.Add(5*time.Minute))
		mustBeSignedOut(t, b)
	})
}

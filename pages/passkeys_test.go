package pages

import (
	"context"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// withPasskeys turns the pages' passkey steps on.
func withPasskeys(_ *auth.Config, c *Config) { c.Passkeys = &Passkeys{} }

// addPasskey stores a passkey of the user with email, as the passkeys
// module's registration would, and returns its id as the pages post it.
func (e *env) addPasskey(email, name string, synced bool) string {
	e.t.Helper()
	u := e.user(email)
	ctx := context.Background()
	handle, err := e.users.PasskeyUserHandle(ctx, u.ID, []byte("handle-of-"+u.ID))
	if err != nil {
		e.t.Fatal(err)
	}
	id := []byte("credential-" + name)
	err = e.users.AddPasskey(ctx, &user.Passkey{ID: id, UserID: u.ID, UserHandle: handle, PublicKey: []byte("cose"),
		BackupEligible: synced, BackupState: synced, AttestationType: "none", Name: name, CreatedAt: e.clock.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(id)
}

// TestPasskeysOff: without Config.Passkeys no page mentions passkeys or
// loads their script, and their form routes are the 404 page.
func TestPasskeysOff(t *testing.T) {
	e := setup(t, nil)
	b := e.browser()
	login := b.get("/login")
	for _, s := range []string{"passkeys.js", "webauthn", "passkey"} {
		if strings.Contains(login.Body, s) {
			t.Errorf("/login without passkeys has %q", s)
		}
	}
	b.register()
	if p := b.get("/settings/security"); strings.Contains(p.Body, `id="passkeys"`) || strings.Contains(p.Body, "passkeys.js") {
		t.Errorf("the security page lists passkeys when they are off\n%s", p.Body)
	}
	b.post("/settings/passkeys/delete", form("passkey", "x")).wantPage(t, http.StatusNotFound, "notfound")
}

// TestPasskeyLoginPage: with passkeys on, the login page loads the
// passkeys module's script before its own, offers passkeys in the email
// field's autofill, and has "Sign in with a passkey", hidden until the
// script shows it. With SecondFactorOnly it offers neither.
func TestPasskeyLoginPage(t *testing.T) {
	e := setup(t, withPasskeys)
	p := e.browser().get("/login")
	p.wantPage(t, http.StatusOK, "login")
	scripts := regexp.MustCompile(`<script src="([^"]+)" defer></script>`).FindAllStringSubmatch(p.Body, -1)
	if len(scripts) != 2 || scripts[0][1] != "/api/passkeys/passkeys.js" || scripts[1][1] != "/assets/app.js" {
		t.Errorf("scripts %q, want /api/passkeys/passkeys.js, then /assets/app.js", scripts)
	}
	if !strings.Contains(regexp.MustCompile(`<input id="email"[^>]*>`).FindString(p.Body), `autocomplete="username webauthn"`) {
		t.Errorf("the email field does not offer passkeys in its autofill\n%s", p.Body)
	}
	box := regexp.MustCompile(`(?s)<div id="passkey-signin-box"[^>]*>.*?</div>`).FindString(p.Body)
	if !strings.Contains(box, " hidden>") || !strings.Contains(box, `data-next="/dashboard"`) ||
		!strings.Contains(box, `<button type="button" id="passkey-signin" class="secondary">Sign in with a passkey</button>`) {
		t.Errorf("the passkey sign-in: %s", box)
	}

	second := setup(t, func(a *auth.Config, c *Config) { c.Passkeys = &Passkeys{SecondFactorOnly: true} })
	p = second.browser().get("/login")
	if strings.Contains(p.Body, "webauthn") || strings.Contains(p.Body, "passkey-signin") || !strings.Contains(p.Body, "/api/passkeys/passkeys.js") {
		t.Errorf("with SecondFactorOnly the login page offers a passwordless sign-in, or lacks the script\n%s", p.Body)
	}
}

// TestPasskeySignUpOnRegisterPage: with passwordless passkeys the
// register page offers "Sign up with a passkey", hidden until the script
// shows it (WebAuthn needs JavaScript; without it the password form is the
// page), going where the register form goes. Without passkeys, or with
// SecondFactorOnly, it does not.
func TestPasskeySignUpOnRegisterPage(t *testing.T) {
	e := setup(t, withPasskeys)
	p := e.browser().get("/register")
	p.wantPage(t, http.StatusOK, "register")
	box := regexp.MustCompile(`(?s)<div id="passkey-signup-box"[^>]*>.*?</div>`).FindString(p.Body)
	if !strings.Contains(box, " hidden>") || !strings.Contains(box, `data-passkey="signup"`) || !strings.Contains(box, `data-next="/dashboard?done=registered"`) ||
		!strings.Contains(box, `<button type="button" id="passkey-signup" class="secondary">Sign up with a passkey</button>`) ||
		!strings.Contains(box, `<p class="field-error" id="passkey-signup-error" role="alert"></p>`) {
		t.Errorf("the passkey sign-up: %s", box)
	}
	if !strings.Contains(p.Body, `<form id="register-form" method="post" action="/register">`) || !strings.Contains(p.Body, `id="password"`) {
		t.Errorf("the password form is not the page without JavaScript\n%s", p.Body)
	}

	for name, cfg := range map[string]func(*auth.Config, *Config){
		"passkeys off":       nil,
		"second factor only": func(a *auth.Config, c *Config) { c.Passkeys = &Passkeys{SecondFactorOnly: true} },
	} {
		if p := setup(t, cfg).browser().get("/register"); strings.Contains(p.Body, "passkey-signup") {
			t.Errorf("%s: the register page offers a passkey sign-up\n%s", name, p.Body)
		}
	}
}

// TestPasskeyTwoFactorPage: the 2FA page offers "Use a passkey" (hidden
// until the script shows it) only to a pending login whose user has one.
func TestPasskeyTwoFactorPage(t *testing.T) {
	e := setup(t, withPasskeys)
	b := e.registered()
	b.enableTwoFactor()
	b.post("/logout", nil)
	b.logIn("/2fa")
	if p := b.get("/2fa"); strings.Contains(p.Body, "passkey-2fa") {
		t.Errorf("the 2FA page offers a passkey to a user who has none\n%s", p.Body)
	}
	e.addPasskey(adaEmail, "Laptop", false)
	p := b.get("/2fa")
	box := regexp.MustCompile(`(?s)<div id="passkey-2fa-box"[^>]*>.*?</div>`).FindString(p.Body)
	if !strings.Contains(box, " hidden>") || !strings.Contains(box, `<button type="button" id="passkey-2fa" class="secondary">Use a passkey</button>`) {
		t.Errorf("the 2FA page's passkey: %q\n%s", box, p.Body)
	}
	// A wrong code keeps the offer.
	p = b.post("/2fa", form("code", "000000"))
	if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `id="passkey-2fa"`) {
		t.Errorf("after a wrong code: %d, passkey offered %v", p.Status, strings.Contains(p.Body, `id="passkey-2fa"`))
	}
	// Without a pending login (a fresh browser), none.
	if p := e.browser().get("/2fa"); strings.Contains(p.Body, "passkey-2fa") {
		t.Error("the 2FA page offers a passkey without a pending login")
	}
}

// TestPasskeyList: the security page lists the user's passkeys with their
// name, when they were added and last used and whether they are synced,
// each with a rename and a delete form; "Add a passkey" is a template
// the script inserts, so without it there is no form that cannot work.
func TestPasskeyList(t *testing.T) {
	e := setup(t, func(c *auth.Config, p *Config) {
		withPasskeys(c, p)
		c.SessionIdleTimeout = -1 // an hour passes between the page's requests
	})
	b := e.registered()
	p := b.get("/settings/security")
	p.wantText(t, "no-passkeys", "You have no passkeys yet.")
	e.addPasskey(adaEmail, "Laptop", false)
	e.clock.Advance(time.Hour)
	e.addPasskey(adaEmail, "Phone", true)
	p = b.get("/settings/security")
	p.wantPage(t, http.StatusOK, "security")
	items := regexp.MustCompile(`(?s)<strong id="passkey-(\d)">([^<]*)</strong>\s*<span class="meta">(.*?)</span>`).FindAllStringSubmatch(p.Body, -1)
	want := [][2]string{
		{"Laptop", "Added 2031-03-14 15:09 UTC, never used, on one device only"},
		{"Phone", "Added 2031-03-14 16:09 UTC, never used, synced across your devices"},
	}
	if len(items) != 2 {
		t.Fatalf("listed %q, want Laptop and Phone\n%s", items, p.Body)
	}
	for i, it := range items {
		if it[2] != want[i][0] || unescape(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(it[3], "")) != want[i][1] {
			t.Errorf("passkey %d: %q, %q; want %q", i, it[2], it[3], want[i])
		}
	}
	for _, s := range []string{`Added <time datetime="2031-03-14T16:09:00Z" data-local>2031-03-14 16:09 UTC</time>`, // the script shows it in local time
		`<form id="passkey-rename-0" class="passkey-rename" method="post" action="/settings/passkeys/rename">`,
		`<input id="passkey-name-1" name="name" type="text" autocomplete="off" value="Phone" required`,
		`<form id="passkey-delete-1" method="post" action="/settings/passkeys/delete">`,
		`<button type="submit" class="danger" aria-describedby="passkey-1">Delete</button>`,
		`<template id="passkey-add-template">`} {
		if !strings.Contains(p.Body, s) {
			t.Errorf("the security page lacks %s", s)
		}
	}
	if !regexp.MustCompile(`<div id="passkey-add-box"[^>]* hidden>`).MatchString(p.Body) {
		t.Error("the add box is not hidden for the script to show")
	}
	// Used since: the time shows.
	u := e.user(adaEmail)
	keys, _ := e.users.ListPasskeys(context.Background(), u.ID)
	if err := e.users.UsePasskey(context.Background(), u.ID, keys[0].ID, user.PasskeyUse{At: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := unescape(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(regexp.MustCompile(`(?s)<span class="meta">(.*?)</span>`).FindStringSubmatch(b.get("/settings/security").Body)[1], "")); got != "Added 2031-03-14 15:09 UTC, last used 2031-03-14 16:09 UTC, on one device only" {
		t.Errorf("after a use: %q", got)
	}
}

// TestPasskeyRename: a plain form renames a passkey; a bad name shows
// beside that passkey's field, the name typed kept; another user's or an
// unknown passkey is not found.
func TestPasskeyRename(t *testing.T) {
	e := setup(t, withPasskeys)
	b := e.registered()
	e.addPasskey(adaEmail, "Laptop", false)
	id := e.addPasskey(adaEmail, "Phone", false)

	b.post("/settings/passkeys/rename", form("passkey", id, "name", "  Work phone ")).
		wantRedirect(t, "/settings/security?done=passkey-renamed#passkeys")
	p := b.get("/settings/security?done=passkey-renamed")
	if p.text(t, "notice") != "Passkey renamed." || p.text(t, "passkey-1") != "Work phone" {
		t.Errorf("after the rename: notice %q, name %q", p.text(t, "notice"), p.text(t, "passkey-1"))
	}

	p = b.post("/settings/passkeys/rename", form("passkey", id, "name", strings.Repeat("x", 65)))
	p.wantPage(t, http.StatusBadRequest, "security")
	p.wantFieldError(t, "passkey-name-1", "Name is too long")
	p = b.post("/settings/passkeys/rename", form("passkey", id, "name", " "))
	p.wantFieldError(t, "passkey-name-1", "Name is required")

	other := e.browser()
	other.post("/register", form("name", "Bob", "email", "bob@example.com", "password", adaPass)).wantRedirect(t, "/dashboard?done=registered")
	bobs := e.addPasskey("bob@example.com", "Bob's key", false)
	p = b.post("/settings/passkeys/rename", form("passkey", bobs, "name", "Mine now"))
	p.wantPage(t, http.StatusNotFound, "security")
	p.wantSummary(t, "Passkey not found")
	e.browser().post("/settings/passkeys/rename", form("passkey", id, "name", "x")).wantRedirect(t, "/login?done=session-ended")
}

// TestPasskeyDelete: deleting a passkey needs a recent sign-in: after an
// old one the password confirmation comes first (saying why) and returns
// to the list; the deletion mails a notice.
func TestPasskeyDelete(t *testing.T) {
	e := setup(t, withPasskeys)
	b := e.registered()
	id := e.addPasskey(adaEmail, "Laptop", false)

	e.clock.Advance(16 * time.Minute)
	b.post("/settings/passkeys/delete", form("passkey", id)).wantRedirect(t, "/settings/confirm-password?next=passkeys")
	p := b.get("/settings/confirm-password?next=passkeys")
	if !strings.Contains(p.Body, "before adding or deleting a passkey.") || !strings.Contains(p.Body, `name="next" value="passkeys"`) {
		t.Errorf("the confirmation page for passkeys\n%s", p.Body)
	}
	b.post("/settings/confirm-password", form("next", "passkeys", "password", adaPass)).
		wantRedirect(t, "/settings/security?done=password-confirmed#passkeys")
	b.post("/settings/passkeys/delete", form("passkey", id)).wantRedirect(t, "/settings/security?done=passkey-deleted#passkeys")
	p = b.get("/settings/security?done=passkey-deleted")
	if p.text(t, "notice") != "Passkey deleted." || p.text(t, "no-passkeys") != "You have no passkeys yet." {
		t.Errorf("after the deletion: %q, %q", p.text(t, "notice"), p.text(t, "no-passkeys"))
	}
	e.flushMail()
	var notices int
	for _, m := range e.mail.Messages() {
		if m.Kind == mail.KindPasskeyDeleted && strings.Contains(m.Text, "Laptop") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d deletion notices naming Laptop, want 1", notices)
	}
	p = b.post("/settings/passkeys/delete", form("passkey", id))
	p.wantPage(t, http.StatusNotFound, "security")
	p.wantSummary(t, "Passkey not found")
}

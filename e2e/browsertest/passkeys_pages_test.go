package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// passkeyExample starts the example server fw with the passkeys module on
// (the memory store holds passkeys) at http://localhost:PORT, its APP_URL:
// the relying party is localhost, and a browser offers WebAuthn over
// plain HTTP on localhost only, not on 127.0.0.1. The returned server's
// URL is the localhost one.
func passkeyExample(t *testing.T, fw string) *servertest.Server {
	t.Helper()
	addr := freeAddr(t)
	site := "http://localhost:" + strings.TrimPrefix(addr, "127.0.0.1:")
	s := startWith(t, fw, "passkeys: on for "+site, "ADDR="+addr, "APP_URL="+site, "DATABASE_URL=memory", "PASSKEYS=true")
	s.URL = site
	return s
}

// addAuthenticator gives the browser's tab the DevTools protocol's virtual
// authenticator: a platform authenticator (CTAP2, internal) with resident
// keys and user verification that says yes without a person. It returns
// the authenticator's id, for the tests that read its credentials.
func addAuthenticator(t *testing.T, b *Browser) webauthn.AuthenticatorID {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	va, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		},
	})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return va.AuthenticatorID
}

// withoutAutofill makes the pages opened from now on see a browser without
// passkey autofill (conditional mediation), until the returned function is
// called. The virtual authenticator answers an autofill request at once,
// as a person picking the passkey from the email field's suggestions
// would, so the buttons are tested with it off.
func withoutAutofill(t *testing.T, b *Browser) (restore func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	res, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);`,
	})
	if err != nil {
		t.Fatalf("Page.addScriptToEvaluateOnNewDocument: %v", err)
	}
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.ctx, Timeout)
		defer cancel()
		if _, err := chromedp.Call(ctx, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams(res)); err != nil {
			t.Fatalf("Page.removeScriptToEvaluateOnNewDocument: %v", err)
		}
	}
}

// TestPasskeyPages goes through the pages' passkey steps in Chromium with
// its virtual authenticator, on each example server: add a passkey on the
// security page, sign out, sign in with it alone (with the button, then
// from the email field's autofill), turn on 2FA and finish a password
// login with the passkey as the second step; then, with
// JavaScript off, the login page shows no passkey button and the security
// page no "Add a passkey", while the list, rename, the password
// confirmation and delete work as plain forms; with JavaScript on again
// the deleted passkey signs in no more, and the page says so.
func TestPasskeyPages(t *testing.T) {
	Chromium(t)
	for _, fw := range []string{"nethttp", "gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			s := passkeyExample(t, fw)
			b := New(t, fw+"-passkeys", MapHost("localhost"))
			f := &flow{t: t, s: s, b: b, js: true}
			b.Open(s.URL + "/register")
			b.WaitPage("register", "/register")
			addAuthenticator(t, b)
			autofillBack := withoutAutofill(t, b)
			b.Open(s.URL + "/register")
			b.WaitPage("register", "/register")

			// Registered, the person adds a passkey (the sign-in is recent).
			submitRegistration(b, userName, email, password)
			b.WaitPage("dashboard", "/dashboard")
			f.verifyFirstLink() // a passkey needs a verified address
			b.Open(f.page("/settings/security"))
			b.WaitText("no-passkeys", "You have no passkeys yet.")
			b.Fill("passkey-new-name", "Chromium")
			b.Shot("passkey-add")
			b.Submit("passkey-add-form")
			b.WaitText("notice", "Passkey added.")
			f.wantText("passkey-0", "Chromium")
			if meta := Eval[string](b, `document.querySelector("#passkey-list .meta").textContent`); !strings.Contains(meta, "never used") {
				t.Errorf("the new passkey's details: %q", meta)
			}
			b.Shot("passkey-added")

			// Signed out, the passkey alone signs in.
			f.logout()
			b.WaitText("passkey-signin", "Sign in with a passkey")
			if ac := Eval[string](b, `document.getElementById("email").autocomplete`); ac != "username webauthn" {
				t.Errorf("the email field's autocomplete is %q, want username webauthn", ac)
			}
			b.Shot("login-passkey")
			b.Click("passkey-signin")
			b.WaitPage("dashboard", "/dashboard")
			b.Shot("passkey-signed-in")

			// With 2FA on, the passkey finishes a password login.
			f.turnOnTwoFactor()
			f.codes = f.shownCodes()
			f.logout()
			f.login(email, password)
			b.WaitPage("twofactor", "/2fa")
			b.WaitText("passkey-2fa", "Use a passkey")
			b.Click("trust") // "trust this browser" holds for the passkey too
			b.Shot("2fa-passkey")
			b.Click("passkey-2fa")
			b.WaitPage("dashboard", "/dashboard")
			b.Open(f.page("/settings/security"))
			b.WaitFor("the browser trusted at the passkey step", `document.querySelectorAll("#device-list li").length === 1`)

			// The email field's autofill: the browser offers the passkey, the
			// person picks it (the virtual authenticator at once), signed in.
			autofillBack()
			b.Open(f.page("/settings/security"))
			b.WaitPage("security", "/settings/security")
			b.Click("logout")
			b.WaitPage("dashboard", "/dashboard")
			if h := strings.Join(b.History(), " "); !strings.Contains(h, "/login?done=logged-out") {
				t.Errorf("signed in from the autofill without the login page: history %s", h)
			}

			// Without JavaScript: no passkey buttons, no add form; the list,
			// rename, the confirmation and delete are plain forms.
			b.DisableScripts(true)
			b.Open(f.page("/login"))
			b.WaitPage("login", "/login")
			if b.Visible("passkey-signin") || b.Visible("passkey-signin-box") {
				t.Error("without JavaScript the login page shows the passkey button")
			}
			b.Open(f.page("/settings/security"))
			b.WaitText("passkey-0", "Chromium")
			if b.Visible("passkey-add-box") || Eval[bool](b, `!!document.getElementById("passkey-add-form")`) {
				t.Error("without JavaScript the security page has an add-passkey form")
			}
			if meta := Eval[string](b, `document.querySelector("#passkey-list .meta").textContent`); !strings.Contains(meta, "last used") {
				t.Errorf("the used passkey's details: %q", meta)
			}
			b.Fill("passkey-name-0", "Laptop")
			b.Submit("passkey-rename-0")
			b.WaitText("notice", "Passkey renamed.")
			f.wantText("passkey-0", "Laptop")
			b.Shot("passkey-renamed-nojs")
			b.Open(f.page("/settings/confirm-password?next=passkeys"))
			b.WaitText("confirm-password-form", "before adding or deleting a passkey")
			b.Fill("confirm-password", password)
			b.Fill("confirm-code", f.codes[0]) // 2FA is on: the second factor too
			b.Submit("confirm-password-form")
			b.WaitText("notice", "Password confirmed.")
			if !strings.HasSuffix(b.Location(), "/settings/security?done=password-confirmed#passkeys") {
				t.Errorf("after the confirmation: at %s, want the passkey list", b.Location())
			}
			b.Submit("passkey-delete-0")
			b.WaitText("notice", "Passkey deleted.")
			b.WaitText("no-passkeys", "You have no passkeys yet.")
			b.Shot("passkey-deleted-nojs")

			// The authenticator still holds it, but the server no more.
			b.DisableScripts(false)
			b.Open(f.page("/settings/security"))
			b.WaitPage("security", "/settings/security")
			b.Click("logout")
			b.WaitText("passkey-signin", "Sign in with a passkey")
			b.WaitText("passkey-signin-error", "Passkey could not be verified") // from the autofill
			if got := Eval[string](b, `location.pathname`); got != "/login" {
				t.Errorf("a deleted passkey: at %s, want the login page", got)
			}
			b.Shot("passkey-deleted-signin")
		})
	}
}

// TestPasskeyWrongOrigin opens the pages at 127.0.0.1 while the relying
// party is localhost (APP_URL): the browser refuses the ceremony. The
// autofill gives up without a word or a console error, and the button
// says the passkey could not be used; the page stays usable.
func TestPasskeyWrongOrigin(t *testing.T) {
	Chromium(t)
	s := passkeyExample(t, "nethttp")
	b := New(t, "passkeys-wrong-origin")
	b.Open(strings.Replace(s.URL, "localhost", "127.0.0.1", 1) + "/login")
	b.WaitText("passkey-signin", "Sign in with a passkey")
	b.Click("passkey-signin")
	b.WaitText("passkey-signin-error", "The passkey could not be used. Try again, or sign in another way.")
	b.Shot("wrong-origin")
}

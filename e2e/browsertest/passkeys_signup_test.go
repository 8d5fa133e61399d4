package browsertest

import (
	"testing"
)

// TestPasskeySignUpPage signs up on the register page with a passkey and
// no password, in Chromium with its virtual authenticator, on the net/http
// example (the pages and the ceremony are the same on every framework;
// e2e/passkeysflow runs the routes on all three): the name and email of
// the form, "Sign up with a passkey", the dashboard welcomes the new
// account and asks for the mailed link, which verifies it; signed out, the
// passkey alone signs in. Without JavaScript the register page shows no
// passkey button, and its password form is the page.
func TestPasskeySignUpPage(t *testing.T) {
	Chromium(t)
	s := passkeyExample(t, "nethttp")
	b := New(t, "nethttp-passkey-signup", MapHost("localhost"))
	f := &flow{t: t, s: s, b: b, js: true}
	b.Open(s.URL + "/register")
	b.WaitPage("register", "/register")
	addAuthenticator(t, b)
	defer withoutAutofill(t, b)()
	b.Open(s.URL + "/register")
	b.WaitPage("register", "/register")

	b.WaitText("passkey-signup", "Sign up with a passkey")
	b.Fill("name", userName)
	b.Fill("email", email)
	b.Shot("register-passkey")
	b.Click("passkey-signup")
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("notice", "We sent you a link to verify your email address")
	b.Shot("passkey-signed-up")
	f.verifyFirstLink()

	f.logout()
	b.WaitText("passkey-signin", "Sign in with a passkey")
	b.Click("passkey-signin")
	b.WaitPage("dashboard", "/dashboard")

	// The address has an account now: a second sign-up says so beside
	// the button, and the page stays.
	f.logout()
	b.Open(s.URL + "/register")
	b.WaitPage("register", "/register")
	b.Fill("name", userName)
	b.Fill("email", email)
	b.Click("passkey-signup")
	b.WaitText("passkey-signup-error", "Email already registered")
	b.Shot("passkey-signup-taken")

	b.DisableScripts(true)
	b.Open(s.URL + "/register")
	b.WaitPage("register", "/register")
	if b.Visible("passkey-signup") || b.Visible("passkey-signup-box") {
		t.Error("without JavaScript the register page shows the passkey sign-up")
	}
	if !b.Visible("password") {
		t.Error("without JavaScript the register page has no password field")
	}
}

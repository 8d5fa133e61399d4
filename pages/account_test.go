package pages

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
)

func TestRegister(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	if b.cookie("authkit_session") == "" {
		t.Fatal("registration did not sign in")
	}
	u := e.user(adaEmail)
	if u.Name != "Ada" || !u.EmailVerifiedAt.IsZero() {
		t.Errorf("stored user %+v", u)
	}
	if links := e.mailed("verify-email"); len(links) != 1 {
		t.Errorf("verification links mailed: %q, want 1", links)
	}
	p := b.get("/dashboard?done=registered")
	p.wantText(t, "notice", "Welcome! We sent you a link to verify your email address.")
	if !strings.Contains(p.Body, `id="unverified-notice"`) {
		t.Error("the dashboard does not say the address is unverified")
	}
}

func TestRegisterErrorsBesideTheirFields(t *testing.T) {
	e := setup(t, func(a *auth.Config, _ *Config) { a.Limits.Register = auth.Limit{Max: 50, Window: time.Hour} })
	e.browser().register()
	for _, tc := range []struct {
		name, email, password string
		status                int
		field, msg            string
	}{
		{"Ada", adaEmail, adaPass, 400, "email", "Email already registered"},
		{"Ada", "not-an-address", adaPass, 400, "email", "Invalid email address"},
		{"", "b@example.com", adaPass, 400, "name", "Name is required"},
		{"Bob", "b@example.com", "short", 400, "password", "Password must be at least 8 characters"},
	} {
		p := e.browser().post("/register", form("name", tc.name, "email", tc.email, "password", tc.password))
		p.wantPage(t, tc.status, "register")
		if got := p.fieldError(t, tc.field); got != tc.msg {
			t.Errorf("%s/%s: beside %s: %q, want %q", tc.email, tc.name, tc.field, got, tc.msg)
		}
		if tc.email != "" && !strings.Contains(p.Body, `value="`+tc.email+`"`) {
			t.Errorf("%s: the email typed is not kept", tc.email)
		}
		if strings.Contains(p.Body, tc.password) && tc.password != "" {
			t.Errorf("%s: the password is shown again", tc.email)
		}
	}
	if _, err := e.users.ByEmail(t.Context(), "b@example.com"); err == nil {
		t.Error("a refused registration created an account")
	}
}

func TestVerifyEmail(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	link := e.mailed("verify-email")[0]
	// Signed out (another device): on to the login page with the news.
	other := e.browser()
	other.get(link).wantRedirect(t, "/login?done=email-verified")
	if e.user(adaEmail).EmailVerifiedAt.IsZero() {
		t.Fatal("the link did not verify the address")
	}
	if got := other.get("/login?done=email-verified").text(t, "notice"); got != "Your email address is verified. Thank you!" {
		t.Errorf("notice %q", got)
	}
	// Signed in: on to AfterLogin; again: already verified.
	b.get(link).wantRedirect(t, "/dashboard?done=already-verified")
	// The page that sends a new link offers none to a verified address.
	p := b.get("/resend-verification")
	p.wantPage(t, http.StatusOK, "resend")
	if got := p.text(t, "resend-verified"); got != "ada@example.com is verified: there is nothing to send." {
		t.Errorf("resend page of a verified address: %q", got)
	}
	if strings.Contains(p.Body, `id="resend-form"`) {
		t.Error("the resend page offers a link to a verified address")
	}
}

func TestVerifyEmailBadLink(t *testing.T) {
	e := setup(t, nil)
	p := e.browser().get("/verify-email/not-a-token")
	p.wantPage(t, http.StatusBadRequest, "verify")
	p.wantSummary(t, "Invalid or expired verification link")
	if !strings.Contains(p.Body, `id="verify-resend-link" href="/resend-verification"`) {
		t.Error("the bad link's page offers no new link")
	}
}

func TestResendVerification(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p := b.get("/resend-verification")
	if !strings.Contains(p.Body, "We will send a new verification link to ada@example.com.") {
		t.Errorf("the page does not name the address:\n%s", p.Body)
	}
	b.post("/resend-verification", nil).wantRedirect(t, "/resend-verification?done=verification-sent")
	if n := len(e.mailed("verify-email")); n != 2 {
		t.Errorf("verification mails: %d, want 2", n)
	}
	b.post("/resend-verification", nil)
	b.post("/resend-verification", nil)
	p = b.post("/resend-verification", nil) // the fourth in the window: limited
	p.wantPage(t, http.StatusTooManyRequests, "resend")
	p.wantSummary(t, "Too many verification emails requested. Try again later.")
	// Signed out: to the login page, nothing mailed.
	e.browser().post("/resend-verification", nil).wantRedirect(t, "/login?done=session-ended")
}

func TestForgotAndResetPassword(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	b := e.browser()
	p := b.post("/forgot-password", form("email", "not-an-address"))
	p.wantPage(t, http.StatusBadRequest, "forgot")
	p.wantFieldError(t, "email", "Invalid email address")
	b.post("/forgot-password", form("email", adaEmail)).wantRedirect(t, "/forgot-password?done=forgot-sent")
	b.post("/forgot-password", form("email", "nobody@example.com")).wantRedirect(t, "/forgot-password?done=forgot-sent")
	links := e.mailed("reset-password")
	if len(links) != 1 {
		t.Fatalf("reset links %q, want 1 (to the known address)", links)
	}
	link := links[0]
	b.get(link).wantPage(t, http.StatusOK, "reset")

	p = b.post(link, form("password", "new password 1", "confirmPassword", "new password 2"))
	p.wantPage(t, http.StatusBadRequest, "reset")
	p.wantFieldError(t, "confirmPassword", "Passwords do not match")
	e.clock.Advance(time.Second)
	b.post(link, form("password", "new password 1", "confirmPassword", "new password 1")).wantRedirect(t, "/login?done=password-reset")
	if ok, _ := password.ForTesting().Verify(t.Context(), "new password 1", e.user(adaEmail).PasswordHash); !ok {
		t.Error("the stored password is not the new one")
	}
	e.flushMail()
	if last, _ := e.mail.Last(); last.Kind != mail.KindPasswordResetDone {
		t.Errorf("last mail %s, want the reset notice", last.Kind)
	}

	// The link opened again: used, and the page says so at once and offers
	// a new one instead of the form.
	p = b.get(link)
	p.wantPage(t, http.StatusBadRequest, "reset")
	if got := p.summary(t); len(got) != 1 || got[0] != "This reset link has already been used" ||
		!strings.Contains(p.Body, `id="reset-forgot-link" href="/forgot-password"`) || strings.Contains(p.Body, `id="reset-form"`) {
		t.Errorf("opening a used link: summary %q; want the new-link offer and no form\n%s", got, p.Body)
	}
	// The link posted again (a form opened before the reset):
	p = b.post(link, form("password", "new password 3", "confirmPassword", "new password 3"))
	p.wantPage(t, http.StatusBadRequest, "reset")
	p.wantSummary(t, "This reset link has already been used")
	if !strings.Contains(p.Body, `id="reset-forgot-link" href="/forgot-password"`) || strings.Contains(p.Body, `id="reset-form"`) {
		t.Errorf("a used link's page: want the new-link offer and no form\n%s", p.Body)
	}
	p = b.post("/reset-password/not-a-token", form("password", "new password 3", "confirmPassword", "new password 3"))
	p.wantPage(t, http.StatusBadRequest, "reset")
	if got := p.summary(t); len(got) != 1 || got[0] != "Invalid or expired reset link" || !strings.Contains(p.Body, `id="reset-new-link"`) {
		t.Errorf("a bad link: %q", got)
	}
}

func TestChangeEmail(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p := b.post("/settings/email", form("newEmail", "ada2@example.com", "password", "wrong password"))
	p.wantPage(t, http.StatusUnauthorized, "security")
	p.wantFieldError(t, "email-password", "Invalid password")
	if !strings.Contains(p.Body, `value="ada2@example.com"`) {
		t.Error("the new address typed is not kept")
	}
	p = b.post("/settings/email", form("newEmail", adaEmail, "password", adaPass))
	p.wantFieldError(t, "newEmail", "Email already in use")
	b.post("/settings/email", form("newEmail", "ada2@example.com", "password", adaPass)).wantRedirect(t, "/settings/security?done=email-changed")
	if _, err := e.users.ByEmail(t.Context(), "ada2@example.com"); err != nil {
		t.Errorf("the store has not the new address: %v", err)
	}
	b.get("/settings/security").wantPage(t, http.StatusOK, "security") // this session was renewed
}

func TestChangePassword(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p := b.post("/settings/password", form("currentPassword", "wrong password", "newPassword", "new password 1"))
	p.wantPage(t, http.StatusUnauthorized, "security")
	p.wantFieldError(t, "currentPassword", "Invalid password")
	p = b.post("/settings/password", form("currentPassword", adaPass, "newPassword", "short"))
	p.wantFieldError(t, "newPassword", "Password must be at least 8 characters")
	e.clock.Advance(time.Second)
	b.post("/settings/password", form("currentPassword", adaPass, "newPassword", "new password 1")).wantRedirect(t, "/settings/security?done=password-changed")
	if got := b.get("/settings/security?done=password-changed").text(t, "notice"); got != "Password changed." {
		t.Errorf("notice %q", got)
	}
	e.browser().post("/login", form("email", adaEmail, "password", "new password 1")).wantRedirect(t, "/dashboard")
}

// TestFormBodyBounded: a form body over 16 KiB is refused before any flow.
func TestFormBodyBounded(t *testing.T) {
	e := setup(t, nil)
	p := e.browser().post("/login", form("email", adaEmail, "password", strings.Repeat("x", 17<<10)))
	p.wantPage(t, http.StatusRequestEntityTooLarge, "problem")
	p.wantSummary(t, "Request body too large")
}

// TestDeleteAccount: the security page links to the confirmation page and
// to the data download; the download is the JSON export; the confirmation
// page, without JavaScript, refuses a wrong password beside its field and
// deletes the account with the right one, then the login page says so.
func TestDeleteAccount(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	sec := b.get("/settings/security")
	sec.wantPage(t, http.StatusOK, "security")
	for _, want := range []string{`id="delete-account-link"`, `id="export-link"`} {
		if !strings.Contains(sec.Body, want) {
			t.Errorf("the security page lacks %s", want)
		}
	}
	ex := b.get("/settings/export")
	if ex.Status != http.StatusOK || !strings.Contains(ex.Header.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(ex.Body, `"email": "`+adaEmail+`"`) || strings.Contains(ex.Body, "$2") {
		t.Fatalf("export: %d %s %q", ex.Status, ex.Header.Get("Content-Disposition"), ex.Body)
	}
	b.get("/settings/delete-account").wantPage(t, http.StatusOK, "delete")
	p := b.post("/settings/delete-account", form("password", "wrong password"))
	p.wantPage(t, http.StatusUnauthorized, "delete")
	p.wantFieldError(t, "delete-password", "Invalid password")
	if _, err := e.users.ByEmail(t.Context(), adaEmail); err != nil {
		t.Fatalf("a refused deletion deleted the user: %v", err)
	}
	b.post("/settings/delete-account", form("password", adaPass)).wantRedirect(t, "/login?done=account-deleted")
	if got := b.get("/login?done=account-deleted").text(t, "notice"); got != "Your account is deleted." {
		t.Errorf("notice %q", got)
	}
	if _, err := e.users.ByEmail(t.Context(), adaEmail); err == nil {
		t.Error("the user is still in the store")
	}
}

package authtest

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/totp"
)

// errTwoFactorRequired is the text of auth.ErrTwoFactorRequired.
const errTwoFactorRequired = "Set up two-factor authentication to continue"

// TwoFactorRequiredNow is an option of NewService: Config.RequireTwoFactor
// on for every account, without a grace period, as CheckRequireTwoFactor
// wants it.
func TwoFactorRequiredNow(c *auth.Config) {
	c.RequireTwoFactor = auth.TwoFactorPolicy{Enabled: true, Grace: -1}
}

// CheckRequireTwoFactor checks a route behind a framework module's
// RequireUser on a Service from NewService with TwoFactorRequiredNow. base
// serves the module's authkit routes and, at base+path, a GET handler that
// answers want to a signed-in user. Signed in as the newly registered
// ada@example.com without 2FA, the route answers 403 {"error": "Set up
// two-factor authentication to continue", "code": "two_factor_required"}
// while authkit's own routes stay open (me, the 2FA setup); once 2FA is
// on, 200 and exactly want.
func CheckRequireTwoFactor(t testing.TB, base, path, want string) {
	t.Helper()
	c := Browser(t)
	if r := Send(t, c, http.MethodPost, base+"/api/auth/register", unitRegister); r.Status != http.StatusOK {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	WantError(t, Send(t, c, http.MethodGet, base+path, ""), http.StatusForbidden, errTwoFactorRequired)
	if r := Send(t, c, http.MethodGet, base+"/api/auth/me", ""); r.Status != http.StatusOK || r.JSON["email"] != unitEmail {
		t.Fatalf("me without 2FA: %d %s, want 200 for %s", r.Status, r.Body, unitEmail)
	}
	setup := Send(t, c, http.MethodPost, base+"/api/2fa/setup", "")
	uri, _ := setup.JSON["qrUri"].(string)
	u, err := url.Parse(uri)
	if setup.Status != http.StatusOK || err != nil || u.Query().Get("secret") == "" {
		t.Fatalf("2fa setup: %d %s", setup.Status, setup.Body)
	}
	tp, err := totp.New(totp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	code, err := tp.Code(u.Query().Get("secret"), unitNow)
	if err != nil {
		t.Fatal(err)
	}
	if r := Send(t, c, http.MethodPost, base+"/api/2fa/confirm", `{"code":"`+code+`"}`); r.Status != http.StatusOK {
		t.Fatalf("2fa confirm: %d %s", r.Status, r.Body)
	}
	r := Send(t, c, http.MethodGet, base+path, "")
	if r.Status != http.StatusOK || r.Body != want {
		t.Errorf("with 2FA: got %d %q, want 200 %q", r.Status, r.Body, want)
	}
}

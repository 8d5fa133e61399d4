package socialtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/social"
)

// The Apple-shaped provider: the test provider run with -apple-key
// checks the client secret as Apple does (an ES256 JWT of the team's
// key), answers with response_mode=form_post (the op package's page, a
// form the browser posts to the callback) and says email_verified as the
// string "true", with no name. Apple's page adds the user field (the
// name) on a user's first sign-in only; the tests add it as it would.
const (
	appleTeam = "TEAM123456"
	appleKID  = "KEY0000001"
)

// appleFlags makes the team's key and returns it with the provider's
// flags that check client secrets against its public half.
func appleFlags(t *testing.T) (*ecdsa.PrivateKey, []string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "apple.pub")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return k, []string{"-apple-key", file, "-apple-team", appleTeam, "-apple-kid", appleKID}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)"\s*/?>`)

// formPostAt starts a sign-in at the app, signs in at the provider as a
// and returns the form the provider's page would have the browser post:
// its action and fields.
func (b *browser) formPostAt(start string, a account) (string, url.Values) {
	b.t.Helper()
	page := b.get(start)
	if page.StatusCode != http.StatusOK || page.Request.URL.Host == b.app.Host {
		b.t.Fatalf("GET %s ended at %s with %d, want the provider's login page", start, page.Request.URL, page.StatusCode)
	}
	if mode := page.Request.URL.Query().Get("response_mode"); mode != "" {
		b.t.Fatalf("the login page's URL has response_mode %q", mode) // asked for in the authorization request, not here
	}
	id := page.Request.URL.Query().Get("authRequestID")
	login := *page.Request.URL
	login.RawQuery = ""
	resp := b.do(http.MethodPost, login.String(), url.Values{"username": {a.Username}, "password": {a.Password}, "id": {id}})
	body, _ := io.ReadAll(resp.Body)
	action := regexp.MustCompile(`<form method="post" action="([^"]*)">`).FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || action == nil {
		b.t.Fatalf("the provider's login answered %d, want its form_post page:\n%s", resp.StatusCode, body)
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllSubmatch(body, -1) {
		form.Set(string(m[1]), html.UnescapeString(string(m[2])))
	}
	return html.UnescapeString(string(action[1])), form
}

// postCrossSite posts form to target as the provider's page makes the
// browser do: from the provider's origin, cross-site, so without the
// app's SameSite=Lax cookies. It returns the answer, not followed.
func (b *browser) postCrossSite(target, origin string, form url.Values, contentType string) *http.Response {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Origin", origin)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// appleSignIn is a whole Apple sign-in as a: the form_post, with user
// (the JSON Apple adds on a first sign-in) when not "", handed on to the
// GET callback, whose answer it returns.
func (b *browser) appleSignIn(a account, user string) *http.Response {
	b.t.Helper()
	action, form := b.formPostAt(start, a)
	if user != "" {
		form.Set("user", user)
	}
	resp := b.postCrossSite(action, origin(b.e.issuer), form, "application/x-www-form-urlencoded")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, social.Prefix+"/test/callback?") {
		b.t.Fatalf("the form_post callback: %d to %q, want 303 to the GET callback", resp.StatusCode, loc)
	}
	return b.get(loc)
}

func origin(issuer string) string {
	u, _ := url.Parse(issuer)
	return u.Scheme + "://" + u.Host
}

const appleUser = `{"name":{"firstName":"Alice","lastName":"Apple"},"email":"alice@example.com"}`

// apple: Sign in with Apple (the social.Apple preset) against the
// Apple-shaped provider: the form_post callback handed on to the GET one
// with the browser's cookie; the client secret JWT the provider checks;
// the string email_verified taken as verified; the name of the first
// sign-in's user field naming the account, and no later one renaming
// it; a forged, absent or other browser's state on the POST refused;
// a private relay address making an account but never linking one.
func apple(t *testing.T, h Harness) {
	t.Run("sign up, then sign in again", func(t *testing.T) {
		e := newEnv(t, h, options{apple: true})
		b := e.browser()
		action, form := b.formPostAt(start, alice)
		if action != e.callback || form.Get("code") == "" || form.Get("state") == "" || form.Has("user") {
			t.Fatalf("the provider's form_post: action %q, fields %v", action, form)
		}
		form.Set("user", appleUser)
		form.Set("extra", "dropped")
		resp := b.postCrossSite(action, origin(e.issuer), form, "application/x-www-form-urlencoded")
		loc, _ := url.Parse(resp.Header.Get("Location"))
		want := url.Values{"code": {form.Get("code")}, "state": {form.Get("state")}, "user": {appleUser}}
		if resp.StatusCode != http.StatusSeeOther || loc.Path != social.Prefix+"/test/callback" || loc.Query().Encode() != want.Encode() {
			t.Fatalf("the form_post callback: %d to %q, want 303 to the GET callback with %v", resp.StatusCode, loc, want)
		}
		if len(resp.Cookies()) != 0 {
			t.Fatalf("the form_post callback set cookies: %v", resp.Cookies())
		}
		if e.userCount() != 0 {
			t.Fatal("the POST made an account")
		}
		wantRedirect(t, b.get(loc.String()), http.StatusSeeOther, "/")
		status, id := b.me()
		u, err := e.users.ByEmail(context.Background(), alice.Email)
		if status != http.StatusOK || err != nil || u.ID != id {
			t.Fatalf("me after the sign-up: %d %q, account %v", status, id, err)
		}
		if u.Name != "Alice Apple" || !u.EmailVerified() || u.PasswordHash != "" {
			t.Fatalf("the account: name %q, verified %v; want Alice Apple's, verified, no password", u.Name, u.EmailVerified())
		}
		if ids := e.identities(u.ID); len(ids) != 1 || ids[0].Subject != alice.ID {
			t.Fatalf("identities %+v", ids)
		}

		// Apple sends no name again; one posted anyway renames nothing.
		again := e.browser()
		wantRedirect(t, again.appleSignIn(alice, `{"name":{"firstName":"Mallory","lastName":"M"}}`), http.StatusSeeOther, "/")
		if status, id2 := again.me(); status != http.StatusOK || id2 != u.ID {
			t.Fatalf("me after the second sign-in: %d %q, want 200 %q", status, id2, u.ID)
		}
		if u, _ = e.users.ByID(context.Background(), u.ID); u.Name != "Alice Apple" || len(e.audit.Of(auth.EventRegistered)) != 1 {
			t.Fatalf("after the second sign-in: name %q, %d registrations", u.Name, len(e.audit.Of(auth.EventRegistered)))
		}
		wantRedirect(t, e.browser().appleSignIn(alice, ""), http.StatusSeeOther, "/")
	})
	t.Run("forged or absent state", func(t *testing.T) {
		e := newEnv(t, h, options{apple: true})
		b := e.browser()
		for name, change := range map[string]func(url.Values){
			"forged": func(f url.Values) { f.Set("state", f.Get("state")+"x") },
			"absent": func(f url.Values) { f.Del("state") },
		} {
			action, form := b.formPostAt(start, alice)
			change(form)
			resp := b.postCrossSite(action, origin(e.issuer), form, "application/x-www-form-urlencoded")
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: the form_post callback: %d", name, resp.StatusCode)
			}
			wantRedirect(t, b.get(resp.Header.Get("Location")), http.StatusSeeOther, loginError("social_state_invalid"))
		}
		// The right form in another browser (login CSRF: the attacker's
		// own sign-in posted into the victim's browser).
		action, form := b.formPostAt(start, alice)
		victim := e.browser()
		resp := victim.postCrossSite(action, origin(e.issuer), form, "application/x-www-form-urlencoded")
		wantRedirect(t, victim.get(resp.Header.Get("Location")), http.StatusSeeOther, loginError("social_state_invalid"))
		if status, _ := victim.me(); status != http.StatusUnauthorized || e.userCount() != 0 || len(e.audit.Of(auth.EventLoginSucceeded)) != 0 {
			t.Fatalf("after refused callbacks: me %d, %d accounts, %d logins", status, e.userCount(), len(e.audit.Of(auth.EventLoginSucceeded)))
		}
		// Not a form, or a longer one than any provider's: refused.
		wantRedirect(t, b.postCrossSite(action, origin(e.issuer), form, "application/json"), http.StatusSeeOther, loginError("social_failed"))
		big := url.Values{"state": {form.Get("state")}, "code": {strings.Repeat("c", 17<<10)}}
		wantRedirect(t, b.postCrossSite(action, origin(e.issuer), big, "application/x-www-form-urlencoded"), http.StatusSeeOther, loginError("social_failed"))
		wantRedirect(t, b.postCrossSite(e.app.URL+social.Prefix+"/nope/callback", origin(e.issuer), form, "application/x-www-form-urlencoded"),
			http.StatusSeeOther, loginError("social_provider_unknown"))
	})
	t.Run("private relay address links no account", func(t *testing.T) {
		e := newEnv(t, h, options{apple: true})
		local := e.local(relay.Email, true)
		wantRedirect(t, e.browser().appleSignIn(relay, ""), http.StatusSeeOther, loginError("social_link_required"))
		if ids := e.identities(local.ID); len(ids) != 0 {
			t.Fatalf("the relay address linked the account: %+v", ids)
		}
	})
	t.Run("private relay address signs up", func(t *testing.T) {
		// Without an account, it makes one as any verified address.
		fresh := newEnv(t, h, options{apple: true})
		b := fresh.browser()
		wantRedirect(t, b.appleSignIn(relay, `{"name":{"firstName":"Re","lastName":"Lay"}}`), http.StatusSeeOther, "/")
		u, err := fresh.users.ByEmail(context.Background(), relay.Email)
		if err != nil || !u.EmailVerified() || u.Name != "Re Lay" {
			t.Fatalf("the relay account: %+v %v", u, err)
		}
	})
}

package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	pwhash "github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/authkit-go/authkit/passkeys"
)

// passkeyPage is the app's page: it loads the passkeys module's script
// and leaves the calls to the test.
const passkeyPage = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Passkeys</title>
<script src="/api/passkeys/passkeys.js"></script></head><body><h1 id="title">Passkeys</h1></body></html>`

// passkeyServer is an example-like server: authkit's JSON routes on
// net/http with the passkeys handler beside them, on http://localhost:PORT
// (a secure context, so WebAuthn works without TLS).
func passkeyServer(t *testing.T) (string, *store.Memory) {
	t.Helper()
	users := store.NewMemory(store.MemoryConfig{})
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	site := "http://localhost:" + strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	svc, err := auth.New(auth.Config{
		Users: users, Secrets: []string{strings.Repeat("p", 32)}, Keys: keys, AppURL: site,
		Insecure: true, Hasher: pwhash.ForTesting(), Mailer: &mail.Capture{},
	})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkeys.New(svc, passkeys.Config{RPID: "localhost", RPDisplayName: "authkit e2e", Origins: []string{site}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "") // the passkey routes and script among core's
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(passkeyPage))
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		_ = pk.Close()
		_ = svc.Close(context.Background())
	})
	return site, users
}

// TestPasskeyRegisterAndSignIn: in Chromium with the DevTools virtual
// authenticator (CTAP2, internal, resident keys, user verification), a
// signed-in user registers a passkey through the module's script, signs
// out, signs in with the passkey alone, uses it as the second step of a
// 2FA login, deletes it, and cannot sign in with it any more.
func TestPasskeyRegisterAndSignIn(t *testing.T) {
	site, users := passkeyServer(t)
	b := New(t, "passkeys")
	b.Open(site + "/")

	va := addAuthenticator(t, b)

	status := Eval[float64](b, `fetch("/api/auth/register", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({email: "ada@example.com", password: "correct horse battery staple", name: "Ada"})}).then(r => r.status)`)
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("register: status %v", status)
	}
	// A passkey needs a verified address.
	ada, err := users.ByEmail(context.Background(), "ada@example.com")
	if err == nil {
		err = users.VerifyEmail(context.Background(), ada.ID, ada.Email, time.Now())
	}
	if err != nil {
		t.Fatal(err)
	}
	added := Eval[map[string]any](b, `authkitPasskeys.register("Chromium").catch(e => ({failed: e.code + ": " + e.message}))`)
	if added["name"] != "Chromium" || added["failed"] != nil {
		t.Fatalf("register a passkey: %v", added)
	}
	u, err := users.ByEmail(context.Background(), "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := users.ListPasskeys(context.Background(), u.ID)
	if err != nil || len(stored) != 1 || stored[0].AttestationType != "none" {
		t.Fatalf("stored passkeys %+v, %v; want one, attestation none", stored, err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	creds, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: va})
	if err != nil || len(creds.Credentials) != 1 || !creds.Credentials[0].IsResidentCredential || creds.Credentials[0].RpID != "localhost" {
		t.Fatalf("the virtual authenticator holds %+v, %v; want one resident credential for localhost", creds, err)
	}
	if string(creds.Credentials[0].UserHandle) == u.ID || strings.Contains(string(creds.Credentials[0].UserHandle), "ada") {
		t.Fatal("the user handle is the id or the email")
	}

	out := Eval[float64](b, `fetch("/api/auth/logout", {method: "POST"}).then(() => fetch("/api/auth/me")).then(r => r.status)`)
	if out != http.StatusUnauthorized {
		t.Fatalf("after logout /api/auth/me answered %v, want 401", out)
	}
	signedIn := Eval[map[string]any](b, `authkitPasskeys.signIn().catch(e => ({failed: e.code + ": " + e.message}))`)
	if signedIn["success"] != true {
		t.Fatalf("passwordless sign-in: %v", signedIn)
	}
	me := Eval[string](b, `fetch("/api/auth/me").then(r => r.text())`)
	var who struct{ Email string }
	if err := json.Unmarshal([]byte(me), &who); err != nil || who.Email != "ada@example.com" {
		t.Fatalf("/api/auth/me after the passkey sign-in: %s", me)
	}
	stored, _ = users.ListPasskeys(context.Background(), u.ID)
	if stored[0].LastUsedAt.IsZero() || time.Since(stored[0].LastUsedAt) > time.Minute {
		t.Errorf("last use not recorded: %v", stored[0].LastUsedAt)
	}
	b.Shot("signed-in")

	// The passkey as the second step: the account gets 2FA (TOTP on, as
	// the 2FA routes leave it), the password step leaves a pending login,
	// and the passkey finishes it.
	if err := users.BeginTOTPSetup(context.Background(), u.ID, "pending"); err != nil {
		t.Fatal(err)
	}
	if err := users.EnableTOTP(context.Background(), u.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed"}); err != nil {
		t.Fatal(err)
	}
	step := Eval[map[string]any](b, `fetch("/api/auth/logout", {method: "POST"}).then(() => fetch("/api/auth/login", {method: "POST",
		headers: {"Content-Type": "application/json"},
		body: JSON.stringify({email: "ada@example.com", password: "correct horse battery staple"})})).then(r => r.json())`)
	if step["requiresTwoFactor"] != true {
		t.Fatalf("password step of the 2FA account: %v", step)
	}
	second := Eval[map[string]any](b, `authkitPasskeys.secondFactor().catch(e => ({failed: e.code + ": " + e.message}))`)
	if second["success"] != true {
		t.Fatalf("passkey as the second factor: %v", second)
	}
	if me := Eval[float64](b, `fetch("/api/auth/me").then(r => r.status)`); me != http.StatusOK {
		t.Fatalf("/api/auth/me after the 2FA step: %v", me)
	}

	// Deleted (the session is recent: it just authenticated), the passkey
	// signs in no more.
	del := Eval[map[string]any](b, `fetch("/api/passkeys").then(r => r.json()).then(l => fetch("/api/passkeys/delete", {method: "POST",
		headers: {"Content-Type": "application/json"}, body: JSON.stringify({id: l.passkeys[0].id})})).then(r => r.json())`)
	if del["success"] != true {
		t.Fatalf("delete: %v", del)
	}
	again := Eval[map[string]any](b, `fetch("/api/auth/logout", {method: "POST"}).then(() => authkitPasskeys.signIn()).catch(e => ({code: e.code}))`)
	if again["code"] != "passkey_invalid" {
		t.Fatalf("sign-in with the deleted passkey: %v, want code passkey_invalid", again)
	}
}

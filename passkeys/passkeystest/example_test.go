package passkeystest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// The Authenticator answering a passwordless sign-in through the typed
// methods, as an app's own test of its handlers would.
func ExampleAuthenticator() {
	t := &testing.T{} // in a test, the test's own t (a zero T serves only here, where nothing fails)
	ctx := context.Background()
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	users := store.NewMemory(store.MemoryConfig{})
	mailer := &mail.Capture{}
	svc, _ := auth.New(auth.Config{Users: users, Secrets: []string{strings.Repeat("x", 32)}, Keys: keys,
		AppURL: "http://localhost", Insecure: true, Hasher: password.ForTesting(), Mailer: mailer})
	pk, _ := passkeys.New(svc, passkeys.Config{RPID: "localhost", Origins: []string{"http://localhost"}})

	// visit runs one request of a browser whose cookies are jar.
	jar := map[string]string{}
	visit := func(call func(v *auth.Visit) any) []byte {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/", nil)
		for k, v := range jar {
			r.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		v := svc.Visit(auth.HTTPRequest(r, nil))
		out, _ := json.Marshal(call(v))
		for _, c := range v.Cookies() {
			jar[c.Name] = c.Value
		}
		return out
	}
	visit(func(v *auth.Visit) any {
		u, _ := svc.Register(ctx, v, auth.RegisterInput{Email: "ada@example.com", Password: "correct horse battery staple", Name: "Ada"})
		return u.Public()
	})
	// A passkey needs a verified address: follow the mailed link.
	_ = svc.FlushMail(ctx)
	link := mailer.Messages()[0].Link
	visit(func(v *auth.Visit) any {
		_, err := svc.VerifyEmail(ctx, v, auth.VerifyEmailInput{Token: link[strings.LastIndexByte(link, '/')+1:]})
		return err
	})

	a := passkeystest.NewAuthenticator(t)
	opts := visit(func(v *auth.Visit) any { o, _ := pk.BeginRegistration(ctx, v); return o })
	cred, _ := a.Create(opts, "http://localhost")
	visit(func(v *auth.Visit) any {
		raw, _ := json.Marshal(cred)
		p, err := pk.FinishRegistration(ctx, v, passkeys.RegistrationInput{Credential: raw, Name: "Laptop"})
		fmt.Println("registered:", p.Name, err)
		return nil
	})

	jar = map[string]string{} // another browser
	opts = visit(func(v *auth.Visit) any { o, _ := pk.BeginLogin(ctx, v); return o })
	assertion, _ := json.Marshal(a.Get(opts, "http://localhost", nil))
	visit(func(v *auth.Visit) any {
		u, err := pk.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: assertion})
		fmt.Println("signed in:", u.Email, err, a.Credentials()[0].Counter)
		return nil
	})
	// Output:
	// registered: Laptop <nil>
	// signed in: ada@example.com <nil> 1
}

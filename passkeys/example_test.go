package passkeys_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/passkeys"
)

// Passkeys beside authkit's own routes, for a site at https://example.com.
func Example() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   store.NewMemory(store.MemoryConfig{}), // implements user.Passkeys
		Secrets: []string{strings.Repeat("x", 32)},
		Keys:    keys,
		AppURL:  "https://example.com",
	})
	if err != nil {
		panic(err)
	}
	pk, err := passkeys.New(svc, passkeys.Config{
		RPID:          "example.com",
		RPDisplayName: "Example",
		Origins:       []string{"https://example.com"},
	})
	if err != nil {
		panic(err)
	}
	_ = pk // the ceremonies as typed methods, for an app's own handlers
	// New added the passkey routes to svc's: a framework module serves
	// them with core's (nethttpauth.Mount(mux, svc, ""), ginauth.New(svc),
	// fiberauth.Register(app, svc)).
	for _, rt := range svc.Modules().Routes() {
		if strings.HasPrefix(rt.Pattern, passkeys.Prefix) {
			fmt.Println(rt.Method, rt.Pattern)
		}
	}
	// Output:
	// POST /api/passkeys/register/begin
	// POST /api/passkeys/register/finish
	// POST /api/passkeys/2fa/begin
	// POST /api/passkeys/2fa/finish
	// POST /api/passkeys/login/begin
	// POST /api/passkeys/login/finish
	// POST /api/passkeys/signup/begin
	// POST /api/passkeys/signup/finish
	// POST /api/passkeys/reauth/begin
	// POST /api/passkeys/reauth/finish
	// GET /api/passkeys
	// POST /api/passkeys/rename
	// POST /api/passkeys/delete
	// GET /api/passkeys/passkeys.js
}

// An origin that is not on the RP ID is a configuration error.
func ExampleNew_origins() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, _ := auth.New(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Secrets: []string{strings.Repeat("x", 32)}, Keys: keys, AppURL: "https://example.com"})
	_, err := passkeys.New(svc, passkeys.Config{RPID: "example.com", Origins: []string{"https://example.org"}})
	fmt.Println(err)
	// Output: passkeys: Config.Origins: "https://example.org" is not on RPID "example.com"
}

// An app's own handlers calling the ceremonies, on any framework: make the
// request's auth.Visit, call the typed method, write the visit's cookies
// and headers, and answer in the app's own way. CookiePath "/" lets the
// challenge cookie reach the app's finish handler wherever it lives.
func ExampleHandler_BeginLogin() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, _ := auth.New(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Secrets: []string{strings.Repeat("x", 32)}, Keys: keys, AppURL: "https://example.com"})
	pk, err := passkeys.New(svc, passkeys.Config{RPID: "example.com", Origins: []string{"https://example.com"}, CookiePath: "/"})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /signin/passkey/options", func(w http.ResponseWriter, r *http.Request) {
		v := svc.Visit(auth.HTTPRequest(r, nil)) // gin: ginauth.Request(c); fiber: fiberauth.Request(c)
		opts, err := pk.BeginLogin(r.Context(), v)
		v.WriteHeaders(w) // the challenge cookie, the rate-limit headers
		if err != nil {
			http.Error(w, svc.Modules().Text(v, err), auth.AsError(err).Status)
			return
		}
		_ = json.NewEncoder(w).Encode(opts) // {"publicKey": ...} for navigator.credentials.get
	})
	mux.HandleFunc("POST /signin/passkey", func(w http.ResponseWriter, r *http.Request) {
		v := svc.Visit(auth.HTTPRequest(r, nil))
		assertion, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		u, err := pk.FinishLogin(r.Context(), v, passkeys.LoginInput{Assertion: assertion})
		v.WriteHeaders(w) // the session cookie; the challenge cookie deleted
		if err != nil {
			http.Error(w, svc.Modules().Text(v, err), auth.AsError(err).Status)
			return
		}
		fmt.Fprintln(w, "welcome", u.Name)
	})

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "https://example.com/signin/passkey/options", nil))
	var opts struct {
		PublicKey struct {
			Challenge        string `json:"challenge"`
			RPID             string `json:"rpId"`
			UserVerification string `json:"userVerification"`
		} `json:"publicKey"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &opts)
	fmt.Println(rec.Code, opts.PublicKey.RPID, opts.PublicKey.UserVerification, opts.PublicKey.Challenge != "")
	fmt.Println(rec.Result().Cookies()[0].Name, rec.Result().Cookies()[0].Path)

	// A finish without the cookie of a begin: the challenge is gone.
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "https://example.com/signin/passkey", strings.NewReader("{}")))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 200 example.com required true
	// authkit_passkey /
	// 400 Passkey request expired or already used. Start again.
}

package passkeys_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// FuzzFinish: whatever body a client sends to a finish route with a begun
// ceremony, the answer is a 400 (never a 500, never a panic, never a
// session); go-webauthn parses the WebAuthn structures, the module its
// envelope.
func FuzzFinish(f *testing.F) {
	e := newEnv(f, func(c *passkeys.Config) { c.BeginLimit = auth.Off }, func(c *auth.Config) { c.Limits.LoginIP = auth.Off })
	a := passkeystest.NewAuthenticator(f)
	home, _ := e.signUp("ada@example.com")
	begin := home.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	cred, _ := a.Create(begin.body, origin)
	seed, _ := json.Marshal(cred)
	f.Add(seed)
	begin = e.client().do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	seed, _ = json.Marshal(a.Get(begin.body, origin, a.Credentials()[0]))
	f.Add(seed)
	f.Add([]byte(`{"id":"","response":{"clientDataJSON":"e30","authenticatorData":"","signature":""}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/login/finish", "/register/finish"} {
			c := home.clone()
			begun := c.doT(t, http.MethodPost, passkeys.Prefix+map[string]string{"/login/finish": "/login/begin", "/register/finish": "/register/begin"}[path], nil)
			if begun.status != http.StatusOK {
				t.Fatalf("begin: %d %s", begun.status, begun.body)
			}
			r := c.doT(t, http.MethodPost, passkeys.Prefix+path, body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("%s with %q: %d %s", path, body, r.status, r.body)
			}
		}
	})
}

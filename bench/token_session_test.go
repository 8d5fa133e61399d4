package bench_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"net/http"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/sessions"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/user"
)

// The claims every token and session of the comparison carries: a user id
// of authkit's shape (22 characters), the issue time, the user's session
// version and the "remember me" flag.
var (
	claimUser     = user.NewID()
	claimVersion  = int64(3)
	claimRemember = false
	claimLifetime = 30 * 24 * time.Hour
)

func secret(tb testing.TB) []byte {
	tb.Helper()
	s := make([]byte, 32)
	_, _ = rand.Read(s) // never fails (crypto/rand)
	return s
}

// sessionData is the data of an authkit session token: the flags byte and
// the session version as a varint (package session's layout).
func sessionData() []byte {
	flags := byte(0)
	if claimRemember {
		flags = 1
	}
	return binary.AppendVarint([]byte{flags}, claimVersion)
}

// jwtClaims carries the same claims in a JWT: sub, iat, exp (a JWT's
// expiry travels in the token; authkit's comes from the verifier), and the
// version and flag as private claims.
type jwtClaims struct {
	jwt.RegisteredClaims
	Version  int64 `json:"ver"`
	Remember bool  `json:"rem"`
}

func newJWTClaims(now time.Time) jwtClaims {
	return jwtClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   claimUser,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(claimLifetime)),
		},
		Version:  claimVersion,
		Remember: claimRemember,
	}
}

// BenchmarkToken creates and verifies a session-shaped token: authkit's
// token.Verifier (HMAC-SHA256 over a binary payload, base64url) against
// golang-jwt/jwt v5 HS256 with the same claims. Verify checks the MAC and
// the expiry and returns the claims; jwt's parser is restricted to HS256 and
// requires exp, as a careful application configures it.
func BenchmarkToken(b *testing.B) {
	key := secret(b)
	v, err := token.NewVerifier(token.Config{Secrets: []string{string(key)}, Purpose: "session", Expiry: claimLifetime})
	if err != nil {
		b.Fatal(err)
	}
	data := sessionData()
	parser := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	keyFunc := func(*jwt.Token) (any, error) { return key, nil }

	b.Run("op=create/impl=authkit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.CreateWith(claimUser, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=create/impl=jwt-hs256", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jwt.NewWithClaims(jwt.SigningMethodHS256, newJWTClaims(time.Now())).SignedString(key); err != nil {
				b.Fatal(err)
			}
		}
	})

	tok, err := v.CreateWith(claimUser, data)
	if err != nil {
		b.Fatal(err)
	}
	jwtTok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, newJWTClaims(time.Now())).SignedString(key)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("token lengths: authkit %d, jwt %d characters", len(tok), len(jwtTok))
	b.Run("op=verify/impl=authkit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := v.Verify(tok)
			if err != nil || c.UserID != claimUser {
				b.Fatalf("Verify = %+v, %v", c, err)
			}
		}
	})
	b.Run("op=verify/impl=jwt-hs256", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c jwtClaims
			if _, err := parser.ParseWithClaims(jwtTok, &c, keyFunc); err != nil || c.Subject != claimUser {
				b.Fatalf("ParseWithClaims = %+v, %v", c, err)
			}
		}
	})
}

// requestBridge is a session.CookieBridge over one *http.Request, as
// core/auth's bridge reads cookies (http.Request.Cookie).
type requestBridge struct{ r *http.Request }

func (q requestBridge) Get(name string) (string, bool) {
	c, err := q.r.Cookie(name)
	if err != nil {
		return "", false
	}
	return c.Value, true
}
func (requestBridge) Set(string, string, session.CookieOptions) {}
func (requestBridge) Delete(string, session.CookieOptions)      {}

// setBridge records the cookie a Login sets.
type setBridge struct{ value string }

func (s *setBridge) Get(string) (string, bool)                    { return "", false }
func (s *setBridge) Set(_, value string, _ session.CookieOptions) { s.value = value }
func (s *setBridge) Delete(string, session.CookieOptions)         {}

// BenchmarkSessionRead is the per-request cost of a signed-in request's
// session: find the cookie in the request, verify it and get the user id
// (and version) out.
//
//   - authkit: Manager.Session(...).User, with a ResolveUser that returns a
//     fixed record (the store lookup is the app's, the peers do none);
//   - gorilla: CookieStore.New with a hash key only (signed, not encrypted,
//     like authkit's cookie): securecookie's HMAC check and gob decode. New
//     is the decode alone; Get would add the per-request registry;
//   - scs: SessionManager.Load from its default memory store (a map lookup
//     and gob decode) and GetString.
func BenchmarkSessionRead(b *testing.B) {
	key := secret(b)
	m, authkitReq := authkitSession(b, session.Config{Secrets: []string{string(key)}})

	gs := sessions.NewCookieStore(key)
	gs.MaxAge(int(claimLifetime / time.Second))
	gsess := sessions.NewSession(gs, "session")
	gsess.Values["uid"] = claimUser
	gsess.Values["ver"] = claimVersion
	gsess.Values["rem"] = claimRemember
	gval, err := encodeGorilla(gs, gsess)
	if err != nil {
		b.Fatal(err)
	}
	gorillaReq := requestWithCookie("session", gval)

	sm, scsReq := scsSession(b, nil)

	b.Run("impl=authkit", func(b *testing.B) { benchAuthkitRead(b, m, authkitReq) })
	b.Run("impl=gorilla", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := gs.New(gorillaReq, "session")
			if err != nil || s.IsNew || s.Values["uid"] != claimUser {
				b.Fatalf("New = %v, %v", s, err)
			}
		}
	})
	b.Run("impl=scs", func(b *testing.B) { benchScsRead(b, sm, scsReq) })
}

// scsSession makes an scs session manager on store (nil: scs's memory
// store) holding the claims of a signed-in session, and a request that
// carries its cookie.
func scsSession(b *testing.B, store scs.Store) (*scs.SessionManager, *http.Request) {
	b.Helper()
	sm := scs.New()
	if store != nil {
		sm.Store = store
	}
	sctx, err := sm.Load(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	sm.Put(sctx, "uid", claimUser)
	sm.Put(sctx, "ver", claimVersion)
	sm.Put(sctx, "rem", claimRemember)
	stok, _, err := sm.Commit(sctx)
	if err != nil {
		b.Fatal(err)
	}
	return sm, requestWithCookie(sm.Cookie.Name, stok)
}

// benchAuthkitRead times reading the signed-in user of req's session.
func benchAuthkitRead(b *testing.B, m *session.Manager, req *http.Request) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		got, err := m.Session(requestBridge{req}).User(ctx)
		if err != nil || got.ID != claimUser {
			b.Fatalf("User = %v, %v", got, err)
		}
	}
}

// benchScsRead times scs loading req's session and reading the user id.
func benchScsRead(b *testing.B, sm *scs.SessionManager, req *http.Request) {
	b.ReportAllocs()
	for b.Loop() {
		c, err := req.Cookie(sm.Cookie.Name)
		if err != nil {
			b.Fatal(err)
		}
		sctx, err := sm.Load(req.Context(), c.Value)
		if err != nil || sm.GetString(sctx, "uid") != claimUser {
			b.Fatalf("Load = %v", err)
		}
	}
}

// authkitSession returns the session manager of cfg, whose ResolveUser
// answers the claims' user, and a request carrying the cookie of that
// user's login through it.
func authkitSession(b *testing.B, cfg session.Config) (*session.Manager, *http.Request) {
	b.Helper()
	u := &user.User{ID: claimUser, SessionVersion: claimVersion}
	cfg.ResolveUser = func(context.Context, string) (*user.User, error) { return u, nil }
	m, err := session.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var set setBridge
	if err := m.Session(&set).Login(context.Background(), u, claimRemember); err != nil {
		b.Fatal(err)
	}
	return m, requestWithCookie(m.CookieName(), set.value)
}

func requestWithCookie(name, value string) *http.Request {
	r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	if err != nil {
		panic(err) // unreachable: a constant, valid URL
	}
	r.Header.Set("Cookie", name+"="+value+"; theme=dark")
	return r
}

// encodeGorilla returns the cookie value gorilla's Save would set.
func encodeGorilla(gs *sessions.CookieStore, s *sessions.Session) (string, error) {
	w := &headerWriter{h: http.Header{}}
	r, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	if err := gs.Save(r, w, s); err != nil {
		return "", err
	}
	c, err := http.ParseSetCookie(w.h.Get("Set-Cookie"))
	if err != nil {
		return "", err
	}
	return c.Value, nil
}

type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerWriter) WriteHeader(int)             {}

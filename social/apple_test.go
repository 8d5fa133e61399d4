package social

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func p256(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The client secret is a JWT signed ES256 with the team's key: its kid,
// iss the team, sub the Services ID, aud Apple, iat now, exp now plus the
// lifetime, which may not pass six months.
func TestAppleClientSecret(t *testing.T) {
	k := p256(t)
	now := time.Unix(1_800_000_000, 0)
	s := AppleSecret{TeamID: "TEAM123456", KeyID: "KEY0000001", ClientID: "com.example.web", Key: k}
	raw, err := AppleClientSecret(s, now, MaxAppleSecretLifetime)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	if h := tok.Headers[0]; h.KeyID != "KEY0000001" || h.Algorithm != "ES256" || h.ExtraHeaders["typ"] != "JWT" {
		t.Fatalf("header %+v", h)
	}
	var c jwt.Claims
	if err := tok.Claims(&k.PublicKey, &c); err != nil {
		t.Fatalf("the signature does not verify with the public key: %v", err)
	}
	if c.Issuer != "TEAM123456" || c.Subject != "com.example.web" || len(c.Audience) != 1 || c.Audience[0] != AppleIssuer ||
		!c.IssuedAt.Time().Equal(now) || c.Expiry.Time().Sub(c.IssuedAt.Time()) != 15777000*time.Second {
		t.Fatalf("claims %+v", c)
	}
	if err := tok.Claims(&p256(t).PublicKey, &c); err == nil {
		t.Fatal("the signature verifies with another key")
	}

	for _, lifetime := range []time.Duration{0, -time.Second, MaxAppleSecretLifetime + time.Second} {
		if _, err := AppleClientSecret(s, now, lifetime); err == nil {
			t.Errorf("lifetime %s accepted", lifetime)
		}
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]*ecdsa.PrivateKey{"none": nil, "P-384": p384} {
		s.Key = key
		if _, err := AppleClientSecret(s, now, time.Minute); err == nil {
			t.Errorf("key %s accepted", name)
		}
	}
}

// The preset makes a fresh secret for each token request, of
// SecretLifetime (default 5 minutes, never more than six months).
func TestApplePreset(t *testing.T) {
	k := p256(t)
	now := time.Unix(1_800_000_000, 0)
	pc, err := Apple(AppleConfig{ClientID: "com.example.web", TeamID: "T", KeyID: "K", PrivateKey: k, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if pc.Name != "apple" || pc.Label != "Apple" || strings.Join(pc.Authoritative, ",") != "*" || strings.Join(pc.NoLinkDomains, ",") != ApplePrivateRelay {
		t.Fatalf("preset %+v", pc)
	}
	o := pc.Provider.(*appleProvider).OIDC
	if o.Issuer() != AppleIssuer || o.responseMode != "form_post" || strings.Join(o.cfg.Scopes, " ") != "name email" {
		t.Fatalf("provider: issuer %q, response_mode %q, scopes %v", o.Issuer(), o.responseMode, o.cfg.Scopes)
	}
	raw, err := o.secret()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.Claims(&k.PublicKey, &c); err != nil || c.Expiry.Time().Sub(now) != 5*time.Minute || c.Subject != "com.example.web" {
		t.Fatalf("secret claims %+v %v", c, err)
	}

	for name, cfg := range map[string]AppleConfig{
		"no client":     {TeamID: "T", KeyID: "K", PrivateKey: k},
		"no team":       {ClientID: "c", KeyID: "K", PrivateKey: k},
		"no key id":     {ClientID: "c", TeamID: "T", PrivateKey: k},
		"no key":        {ClientID: "c", TeamID: "T", KeyID: "K"},
		"over 6 months": {ClientID: "c", TeamID: "T", KeyID: "K", PrivateKey: k, SecretLifetime: MaxAppleSecretLifetime + time.Second},
	} {
		if _, err := Apple(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseApplePrivateKey(t *testing.T) {
	k := p256(t)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseApplePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil || !got.Equal(k) {
		t.Fatalf("ParseApplePrivateKey: %v", err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der384, _ := x509.MarshalPKCS8PrivateKey(p384)
	for name, in := range map[string][]byte{
		"not PEM":    []byte("MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg"),
		"other type": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		"P-384":      pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der384}),
		"garbage":    pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")}),
	} {
		if _, err := ParseApplePrivateKey(in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The user field gives the name only; anything else is no name.
func TestAppleName(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":{"firstName":"Alice","lastName":"Apple"},"email":"a@example.com"}`: "Alice Apple",
		`{"name":{"firstName":" Alice "}}`:                                          "Alice",
		`{"email":"a@example.com"}`:                                                 "",
		`not json`:                                                                  "",
		`{"name":"Alice"}`:                                                          "",
		`{"name":{"firstName":"Al\u0000ice"}}`:                                      "",
		`{"name":{"firstName":"Al\nice"}}`:                                          "",
		`{"name":{"firstName":"` + strings.Repeat("a", 5000) + `"}}`:                "",
	} {
		if got := appleName(in); got != want {
			t.Errorf("appleName(%.40q) = %q, want %q", in, got, want)
		}
	}
}

// email_verified as Apple sends it: a boolean or the string "true".
func TestTrueClaim(t *testing.T) {
	for in, want := range map[string]bool{`true`: true, `"true"`: true, `false`: false, `"false"`: false, `"TRUE"`: false, `1`: false, ``: false} {
		if got := trueClaim([]byte(in)); got != want {
			t.Errorf("trueClaim(%s) = %v, want %v", in, got, want)
		}
	}
}

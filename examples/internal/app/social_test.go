package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSocialSignIn: OAUTH_PROVIDERS adds the social module with a route per
// provider and the pages' buttons; a provider without a client id, or
// without an issuer and no preset, is refused at start-up.
func TestSocialSignIn(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	applePEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	appleFile := filepath.Join(t.TempDir(), "AuthKey.p8")
	if err := os.WriteFile(appleFile, []byte(applePEM), 0o600); err != nil {
		t.Fatal(err)
	}
	apple := func(key string) map[string]string {
		return map[string]string{"OAUTH_PROVIDERS": "apple", "OAUTH_APPLE_CLIENT_ID": "com.example.web", "OAUTH_APPLE_TEAM_ID": "TEAM123456",
			"OAUTH_APPLE_KEY_ID": "KEY0000001", "OAUTH_APPLE_PRIVATE_KEY": key}
	}
	for _, tt := range []struct {
		vars    map[string]string
		wantErr string
		desc    string
	}{
		{vars: map[string]string{}, desc: "social sign-in: off,"},
		{vars: map[string]string{"OAUTH_PROVIDERS": "corp,google", "OAUTH_CORP_CLIENT_ID": "c", "OAUTH_CORP_ISSUER": "https://sso.example.com",
			"OAUTH_GOOGLE_CLIENT_ID": "g", "OAUTH_GOOGLE_CLIENT_SECRET": "s"}, desc: "social sign-in: corp,google,"},
		{vars: map[string]string{"OAUTH_PROVIDERS": "corp", "OAUTH_CORP_ISSUER": "https://sso.example.com"}, wantErr: "OAUTH_CORP_CLIENT_ID is required"},
		{vars: map[string]string{"OAUTH_PROVIDERS": "corp", "OAUTH_CORP_CLIENT_ID": "c"}, wantErr: "OAUTH_CORP_ISSUER is required"},
		{vars: apple(applePEM), desc: "social sign-in: apple,"},
		{vars: apple(appleFile), desc: "social sign-in: apple,"},
		{vars: apple(""), wantErr: "OAUTH_APPLE_TEAM_ID, OAUTH_APPLE_KEY_ID and OAUTH_APPLE_PRIVATE_KEY are required"},
		{vars: apple(filepath.Join(t.TempDir(), "missing.p8")), wantErr: "OAUTH_APPLE_PRIVATE_KEY: open"},
		{vars: apple("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), wantErr: "OAUTH_APPLE_PRIVATE_KEY: social:"},
		{vars: map[string]string{"OAUTH_PROVIDERS": "Bad Name", "OAUTH_BAD NAME_CLIENT_ID": "c", "OAUTH_BAD NAME_ISSUER": "https://x.example"}, wantErr: "provider name"},
	} {
		tt.vars["AUTHKIT_DATA_DIR"] = t.TempDir()
		a := loadOrRefuse(t, tt.vars, tt.wantErr)
		if a == nil {
			continue
		}
		if !strings.Contains(a.Description, tt.desc) {
			t.Errorf("%v: description %q, want %q", tt.vars, a.Description, tt.desc)
		}
		var patterns []string
		for _, p := range a.Service.Modules().Paths() {
			patterns = append(patterns, p.Pattern)
		}
		has := slices.Contains(patterns, "/api/auth/oauth/{provider}/start")
		if has != (a.Social != nil) {
			t.Errorf("%v: start route registered %v, module %v", tt.vars, has, a.Social != nil)
		}
		a.Close(t.Context())
	}
}

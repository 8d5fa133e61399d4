package app

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestSocialSignIn: OAUTH_PROVIDERS adds the social module with a route per
// provider and the pages' buttons; a provider without a client id, or
// without an issuer and no preset, is refused at start-up.
func TestSocialSignIn(t *testing.T) {
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
		{vars: map[string]string{"OAUTH_PROVIDERS": "Bad Name", "OAUTH_BAD NAME_CLIENT_ID": "c", "OAUTH_BAD NAME_ISSUER": "https://x.example"}, wantErr: "provider name"},
	} {
		tt.vars["AUTHKIT_DATA_DIR"] = t.TempDir()
		a, err := Load(env(tt.vars), io.Discard, quiet)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want %q", tt.vars, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tt.vars, err)
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

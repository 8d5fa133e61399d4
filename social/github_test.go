package social

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The GitHub API cannot be reached from the tests: this server answers
// with the shapes GitHub documents (the token endpoint's JSON, /user,
// /user/emails), so the parser and the protocol steps are tested, not
// GitHub itself.
func fakeGitHub(t *testing.T, user string, emails string, apiStatus int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login/oauth/access_token":
			_ = r.ParseForm()
			if r.PostForm.Get("code") != "the-code" || r.PostForm.Get("code_verifier") != "the-verifier" ||
				r.PostForm.Get("client_id") != "id" || r.PostForm.Get("redirect_uri") != "https://app.test/api/auth/oauth/github/callback" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":"bad_verification_code"}`))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "gho_token", "token_type": "bearer", "scope": "user:email"})
		case "/api/user", "/api/user/emails":
			if r.Header.Get("Authorization") != "Bearer gho_token" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if apiStatus != http.StatusOK {
				w.WriteHeader(apiStatus)
				return
			}
			if r.URL.Path == "/api/user" {
				_, _ = w.Write([]byte(user))
			} else {
				_, _ = w.Write([]byte(emails))
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func gitHubAt(t *testing.T, srv *httptest.Server) *GitHubProvider {
	t.Helper()
	g, err := NewGitHub(GitHubConfig{ClientID: "id", ClientSecret: "secret", BaseURL: srv.URL, APIURL: srv.URL + "/api"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var gitHubExchange = ExchangeRequest{Code: "the-code", CodeVerifier: "the-verifier", RedirectURI: "https://app.test/api/auth/oauth/github/callback"}

// TestGitHubClaims: the subject is the numeric id, the name falls back to
// the login, and the address is the primary one with GitHub's verified
// flag: a verified secondary address never stands in for an unverified
// primary.
func TestGitHubClaims(t *testing.T) {
	const user = `{"login":"octocat","id":583231,"name":"The Octocat","email":null}`
	for _, tc := range []struct {
		name, user, emails string
		want               Claims
	}{
		{"primary verified", user, `[{"email":"other@example.org","primary":false,"verified":true},{"email":"octo@example.com","primary":true,"verified":true,"visibility":"public"}]`,
			Claims{Subject: "583231", Email: "octo@example.com", EmailVerified: true, Name: "The Octocat"}},
		{"primary unverified", user, `[{"email":"octo@example.com","primary":true,"verified":false},{"email":"victim@example.org","primary":false,"verified":true}]`,
			Claims{Subject: "583231", Email: "octo@example.com", EmailVerified: false, Name: "The Octocat"}},
		{"no name", `{"login":"octocat","id":583231,"name":null}`, `[]`,
			Claims{Subject: "583231", Name: "octocat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := gitHubAt(t, fakeGitHub(t, tc.user, tc.emails, http.StatusOK)).Exchange(context.Background(), gitHubExchange)
			if err != nil {
				t.Fatal(err)
			}
			if *c != tc.want {
				t.Fatalf("claims %+v, want %+v", *c, tc.want)
			}
		})
	}
}

// TestGitHubFailures: a refused code, a user without an id and an iss
// that is not GitHub's refuse the sign-in; a 5xx of the API is
// ErrUnavailable, a 401 is not.
func TestGitHubFailures(t *testing.T) {
	ok := `{"login":"octocat","id":583231}`
	bad := gitHubExchange
	bad.CodeVerifier = "another"
	for _, tc := range []struct {
		name        string
		srv         *httptest.Server
		req         ExchangeRequest
		unavailable bool
	}{
		{"wrong verifier", fakeGitHub(t, ok, `[]`, http.StatusOK), bad, false},
		{"no id", fakeGitHub(t, `{"login":"x"}`, `[]`, http.StatusOK), gitHubExchange, false},
		{"api 503", fakeGitHub(t, ok, `[]`, http.StatusServiceUnavailable), gitHubExchange, true},
		{"api 401", fakeGitHub(t, ok, `[]`, http.StatusUnauthorized), gitHubExchange, false},
		{"iss", fakeGitHub(t, ok, `[]`, http.StatusOK), ExchangeRequest{Code: "the-code", CodeVerifier: "the-verifier", RedirectURI: gitHubExchange.RedirectURI, Issuer: "https://evil.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := gitHubAt(t, tc.srv).Exchange(context.Background(), tc.req)
			if err == nil {
				t.Fatalf("claims %+v, want an error", c)
			}
			if errors.Is(err, ErrUnavailable) != tc.unavailable {
				t.Fatalf("%v: unavailable %v, want %v", err, errors.Is(err, ErrUnavailable), tc.unavailable)
			}
		})
	}
}

// TestGitHubAuthURL: the authorization URL carries the state, the PKCE
// S256 challenge, the exact redirect URI and the user:email scope.
func TestGitHubAuthURL(t *testing.T) {
	g, err := NewGitHub(GitHubConfig{ClientID: "id"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := g.AuthURL(context.Background(), AuthRequest{State: "st", Nonce: "n", CodeChallenge: "ch", RedirectURI: "https://app.test/api/auth/oauth/github/callback"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if !strings.HasPrefix(raw, "https://github.com/login/oauth/authorize?") || q.Get("state") != "st" || q.Get("code_challenge") != "ch" ||
		q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != "https://app.test/api/auth/oauth/github/callback" ||
		q.Get("scope") != "user:email" || q.Get("client_id") != "id" || q.Get("response_type") != "code" {
		t.Fatalf("auth URL %s", raw)
	}
	if _, err := NewGitHub(GitHubConfig{}); err == nil {
		t.Fatal("NewGitHub without a ClientID succeeded")
	}
}

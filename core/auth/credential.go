package auth

import (
	"context"
	"slices"
)

// CredentialKind names how a request proved who it is from.
type CredentialKind string

// The kinds of credential Authenticate accepts.
const (
	// CredentialSession is the session cookie a browser sends.
	CredentialSession CredentialKind = "session"
	// CredentialAccessToken is a short-lived access token sent as
	// Authorization: Bearer by a mobile app or another non-browser client.
	CredentialAccessToken CredentialKind = "access_token"
	// CredentialAPIKey is a user's personal API key sent as
	// Authorization: Bearer.
	CredentialAPIKey CredentialKind = "api_key"
)

// Credential is how an authenticated request proved who it is from: its
// kind, the id of what it presented (the session, the token's session, the
// API key), and the scopes it carries. A session or an access token
// carries every scope (Scopes is nil and All is true); an API key only
// those it was created with.
type Credential struct {
	Kind   CredentialKind
	ID     string
	Scopes []string
	All    bool
}

// HasScope reports whether c allows scope: always for a session or an
// access token, for an API key when it was created with scope.
func (c Credential) HasScope(scope string) bool {
	return c.All || slices.Contains(c.Scopes, scope)
}

type credentialKey struct{}

// ContextWithCredential returns ctx carrying c, for middleware that tells
// the app's handlers how the request authenticated.
func ContextWithCredential(ctx context.Context, c Credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

// CredentialFromContext returns the credential stored by
// ContextWithCredential.
func CredentialFromContext(ctx context.Context) (Credential, bool) {
	c, ok := ctx.Value(credentialKey{}).(Credential)
	return c, ok
}

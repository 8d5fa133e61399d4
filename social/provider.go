package social

import (
	"context"
	"errors"
)

// Provider is one identity provider: the two protocol steps of an
// authorization-code sign-in. OIDC is the one for any OpenID Connect
// provider; an app adds its own (an OAuth 2.0 provider without OpenID
// Connect) by implementing these two methods.
type Provider interface {
	// AuthURL returns the provider's authorization URL the browser is sent
	// to, carrying r's state, nonce, PKCE challenge (S256) and redirect
	// URI. An error that wraps ErrUnavailable means the provider could not
	// be reached (its discovery document, say).
	AuthURL(ctx context.Context, r AuthRequest) (string, error)

	// Exchange redeems the authorization code and returns who signed in,
	// after every check the protocol asks for: the token endpoint's
	// answer, the ID token's signature, issuer, audience, expiry and nonce
	// (e.Nonce), and e.Issuer, when the provider sent one (RFC 9207), equal
	// to the provider's issuer. An error that wraps ErrUnavailable means
	// the provider could not be reached or answered 5xx; any other error
	// is a refused sign-in.
	Exchange(ctx context.Context, e ExchangeRequest) (*Claims, error)
}

// ErrUnavailable wraps the errors of a provider that could not be reached,
// timed out or failed on its side: the sign-in answers
// auth.ErrSocialProviderUnavailable rather than auth.ErrSocialFailed.
var ErrUnavailable = errors.New("social: provider unavailable")

// AuthRequest is what Provider.AuthURL puts in the authorization URL.
type AuthRequest struct {
	State         string // random, bound to the browser
	Nonce         string // random; the ID token must carry it
	CodeChallenge string // PKCE S256 challenge of the verifier Exchange gets
	RedirectURI   string // the exact callback URL
}

// ExchangeRequest is what Provider.Exchange takes from the callback.
type ExchangeRequest struct {
	Code         string
	CodeVerifier string // the PKCE verifier of AuthRequest.CodeChallenge
	Nonce        string // AuthRequest.Nonce
	RedirectURI  string // the same as AuthRequest.RedirectURI
	// Issuer is the callback's iss parameter (RFC 9207), "" when the
	// provider sent none.
	Issuer string
	// User is the callback's user parameter, which Apple posts on a
	// user's first sign-in only (their name, as JSON); "" when absent.
	// It comes through the browser unsigned: a Provider may take a
	// display name from it, never an address or a subject.
	User string
}

// Claims is who the provider says signed in.
type Claims struct {
	// Subject is the provider's stable, never reassigned id of the
	// account (OpenID Connect "sub"). Required.
	Subject string
	// Email is the account's address at the provider; may be empty.
	Email string
	// EmailVerified: the provider asserts that the person controls Email.
	EmailVerified bool
	// Name is a display name; may be empty.
	Name string
}

// Package socialtest is the social sign-in flow suite: sign-up on the
// first sign-in, sign-in, linking by a verified address and by a signed-in
// user, listing and unlinking, the takeover cases, tampered and replayed
// callbacks, a provider that errs or is down, each against a real OpenID
// provider (zitadel/oidc's certified op package, built from
// social/testdata/oidcprovider and run as a process). A framework module
// runs it by serving the Service's routes; the social module runs it on
// net/http, the e2e module on net/http, gin and fiber (e2e/socialflow).
//
// The suite needs the go tool on PATH (it builds the provider) and the
// repository's source tree (it runs from the workspace, as the tests of
// the repository's modules do).
package socialtest

import (
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/user"
)

// Harness is what a framework integration hands Run.
type Harness struct {
	// Start serves svc's routes (core's and the social module's, added
	// to its route table before Start is called) through the framework
	// under test on 127.0.0.1:0 and returns the base URL
	// ("http://127.0.0.1:PORT"). It registers the server's shutdown with
	// t.Cleanup. Required.
	Start func(t *testing.T, svc *auth.Service) string
	// NewUsers returns a fresh, empty user store for one test, the
	// Service's auth.Config.Users. It must implement user.Identities and
	// user.Passkeys too (the suite links identities, and makes a passkey
	// a claimed account must lose). Default: a store.Memory.
	NewUsers func(t *testing.T) user.Store
	// NewStates returns a fresh store of begun sign-ins for one test
	// (social.Config.States). Default: the Handler's own in-process one.
	NewStates func(t *testing.T) onetime.Store

	bin string // the built provider
}

// Run runs the social flow suite against h: one parallel subtest per
// behaviour, each on a fresh Service, user store (Harness.NewUsers),
// provider process and server.
func Run(t *testing.T, h Harness) {
	if h.Start == nil {
		t.Fatal("socialtest: Harness.Start is required")
	}
	h.bin = buildProvider(t)
	for _, topic := range topics {
		t.Run(topic.name, func(t *testing.T) {
			t.Parallel()
			topic.run(t, h)
		})
	}
}

// topics are the suite's behaviours, each named by what it checks.
var topics = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"sign-up on the first sign-in", signUpOnFirstSignIn},
	{"no sign-up on an untrusted claim", noSignUpOnUntrustedClaim},
	{"sign in again", signInAgain},
	{"returnTo", returnTo},
	{"link by a verified address", linkByVerifiedEmail},
	{"no takeover", noTakeover},
	{"two-factor account", twoFactorAccount},
	{"a native app's sign-in is handed off with PKCE", nativeApp},
	{"tampered state", tamperedState},
	{"replayed callback", replayedCallback},
	{"issuer mismatch", issuerMismatch},
	{"provider error", providerError},
	{"provider down", providerDown},
	{"sign-up closed", signUpClosed},
	{"unknown provider", unknownProvider},
	{"link, list, unlink", linkListUnlink},
	{"link taken", linkTaken},
	{"link needs a session", linkNeedsSession},
	{"store calls observed", storeCallsObserved},
	{"claim an unverified account", claimUnverified},
	{"Sign in with Apple", apple},
}

// Package passkeystest tests passkeys without a browser: Authenticator is
// a software WebAuthn authenticator that answers the options of the begin
// routes as navigator.credentials.create and navigator.credentials.get
// would, and Run is the passkey flow suite, which drives a Service and a
// passkeys.Handler through a real *http.Client on any framework and any
// user store:
//
//	func TestPasskeyFlows(t *testing.T) {
//		passkeystest.Run(t, passkeystest.Harness{
//			Start: func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
//				return authtest.Serve(t, ginauth.New(svc)) // the passkey routes among svc's
//			},
//			NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
//		})
//	}
//
// The suite covers registration (the options, what is stored, the
// recent-authentication rule, another origin or RP ID), passwordless
// sign-in, the passkey as the 2FA step (the pending-login checks, the
// per-user limit shared with TOTP, a failure keeping the pending cookie),
// list, rename and delete (recent authentication, the notice mails, another
// user's passkey not found), the challenge (replay, expiry, purpose, a race
// of finishes with exactly one winner; run it with -race) and a cloned
// authenticator's counter (audited; refused with RefuseCounterRegression).
// Every subtest builds its own Service, Handler and store, on a settable
// clock, and checks exact statuses, texts and codes, the store after the
// call, audit events and mails. Subtests run in parallel.
//
// The Authenticator also serves a module's or an app's own tests: make one
// with NewAuthenticator, hand Create and Get the body of a begin answer,
// and send what they return as the finish body. Set a Credential's Counter
// (or Copy it) to act as a cloned key.
package passkeystest

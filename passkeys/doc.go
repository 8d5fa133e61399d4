// Package passkeys adds WebAuthn passkeys to an authkit Service: as the
// second step of a 2FA login, and for passwordless sign-in with
// discoverable credentials (including the browser's autofill, "conditional
// UI").
//
// The WebAuthn ceremonies (CBOR, COSE, signatures, origin and RP ID checks)
// are github.com/go-webauthn/webauthn's; the decisions every sign-in method
// shares (the pending-login checks, the limits, the hooks, the session,
// audit events and notices) are core's, through
// auth.Modules.FinishTwoFactor and auth.Modules.SignInWithoutPassword; the
// credentials are kept by the user store's user.Passkeys part. This package
// joins them and serves JSON routes under Prefix:
//
//	POST /api/passkeys/register/begin   signed in, recent authentication: creation options
//	POST /api/passkeys/register/finish  the credential (PublicKeyCredential.toJSON()) and "name"
//	POST /api/passkeys/2fa/begin        a pending 2FA login: request options of the user's passkeys
//	POST /api/passkeys/2fa/finish       the assertion: the login is finished
//	POST /api/passkeys/login/begin      passwordless: request options for a discoverable credential
//	POST /api/passkeys/login/finish     the assertion: signed in
//	POST /api/passkeys/signup/begin     {"email", "name"}: creation options for a new account
//	POST /api/passkeys/signup/finish    the credential: the account made, signed in, the link mailed
//	POST /api/passkeys/reauth/begin     signed in: request options of the user's passkeys, UV required
//	POST /api/passkeys/reauth/finish    the assertion: the session is recently authenticated
//	GET  /api/passkeys                  the signed-in user's passkeys
//	POST /api/passkeys/rename           {"id", "name"}
//	POST /api/passkeys/delete           {"id"}, recent authentication
//	GET  /api/passkeys/passkeys.js      the script that calls navigator.credentials
//
// New adds these routes to the Service's route table
// (auth.Modules.AddRoutes), each beside what the OpenAPI document says of
// it (routes.go), so the framework module that mounts the Service serves
// them with core's routes, and auth.Service.OpenAPI documents them. Call
// New before mounting the Service:
//
//	pk, err := passkeys.New(svc, passkeys.Config{
//		RPID:    "example.com",
//		Origins: []string{"https://example.com"},
//	})
//	mux := http.NewServeMux()
//	nethttpauth.Mount(mux, svc, "") // ginauth.New(svc), fiberauth.Register(app, svc)
//
// auth.Modules.Handle runs them as it runs core's: the cross-origin check
// of every state-changing route, the Observer's flow (named as
// auth.Route.Flow names it: "passkeys/login/begin"), a panic answered 500.
// e2e/passkeysflow runs the flow suite of package passkeystest on all
// three frameworks.
//
// Every route is a thin layer over a typed method, as core's are: the
// ceremonies are [Handler.BeginRegistration], [Handler.FinishRegistration],
// [Handler.BeginTwoFactor], [Handler.FinishTwoFactor], [Handler.BeginLogin],
// [Handler.FinishLogin], [Handler.BeginSignUp], [Handler.FinishSignUp],
// [Handler.BeginReauthentication] and
// [Handler.FinishReauthentication]; list, rename and delete are core's
// auth.Service.ListPasskeys, RenamePasskey and DeletePasskey (they need no
// WebAuthn). Each takes the request's auth.Visit, which carries the
// challenge cookie both ways, so an app can call them from its own
// handlers on any framework and write the visit's cookies and headers on
// its answer (see ExampleHandler_BeginLogin; set Config.CookiePath when
// those handlers are not under Prefix):
//
//	v := svc.Visit(auth.HTTPRequest(r, nil)) // ginauth.Request(c), fiberauth.Request(c)
//	opts, err := pk.BeginLogin(r.Context(), v)
//	v.WriteHeaders(w)
//	// answer opts as JSON: {"publicKey": ...} for navigator.credentials.get
//
// Every ceremony's challenge is random (go-webauthn's, 32 bytes), stored
// in Config.Challenges under the hash of a random key that the browser
// holds in the HttpOnly, SameSite=Strict challenge cookie, lives
// Config.ChallengeLifetime, is bound to what it was begun for (the
// signed-in user, the pending login, or passwordless) and is taken
// atomically by the first finish, whatever that finish then decides: a
// replayed or racing finish gets passkey_challenge_invalid.
//
// # The default challenge store
//
// Anybody can begin a passwordless sign-in: it needs no account and no
// cookie, and each begin holds a ceremony in the store until it expires.
// A bounded store that refuses new ceremonies when full would let an
// attacker with a few thousand addresses, each under Config.BeginLimit,
// fill it and so refuse every ceremony of every user (503) for a
// challenge lifetime. The default store (Config.Challenges unset) is
// built so that no anonymous begin can take anything from anyone else:
//
//   - Anonymous ceremonies and those of a known user (registration, the
//     2FA step, which need a session or a correct password) are held in
//     two parts of Config.ChallengeCapacity each (default 100,000). A
//     flood of anonymous begins never touches the other part.
//   - A user holds at most 8 live ceremonies; their next one drops their
//     oldest, so one account cannot fill the users' part either.
//   - A full part drops its oldest ceremony for the new one: a begin is
//     never refused. Under a flood of R anonymous begins a second, an
//     anonymous ceremony survives ChallengeCapacity / R seconds (at the
//     6,000 a second of a measured flood, 16 seconds) instead of every
//     ceremony failing; the finish of one that was dropped answers
//     passkey_challenge_invalid and the browser begins again.
//   - The store logs a WARN line when it drops live ceremonies, at most
//     once a minute with the counts, not once per request.
//
// Other designs were weighed. A challenge sealed into the cookie moves
// the state to the client, but single use still needs a server-side set
// of spent nonces, which a flood of finishes fills the same way; a global
// budget of anonymous begins would itself deny every passwordless
// sign-in to everyone. An app's own store (Redis, SQL) is not bounded by
// the process: its size is the backend's, and Config.BeginLimit and the
// lifetime bound it. A store of the app's that refuses a ceremony with
// onetime.ErrFull answers 503 service_unavailable, logged once a minute.
//
// # Several instances
//
// Config.Challenges is a [ChallengeStore], core's onetime.Store. The
// default keeps challenges in the process, so a ceremony begun on one
// instance of an app fails on another (passkey_challenge_invalid). Apps
// behind a load balancer give every instance one shared store:
//
//	challenges := redisstore.NewOneTime(rdb, redisstore.OneTimeConfig{}) // keys under "authkit:once:"
//	// or, on the app's SQL database (migration 0004): challenges := db.OneTime()
//	pk, err := passkeys.New(svc, passkeys.Config{ /* ... */ Challenges: challenges})
//
// Both take a challenge with one atomic operation, so a finish replayed
// on another instance is refused as it is on the same one.
//
// # Sign-up with a passkey alone
//
// BeginSignUp and FinishSignUp make an account whose only way in is a
// passkey: no password to invent. The account is core's
// (auth.Modules.SignUpWithoutPassword, next to sign-up by email): the
// registration switch, Register's name rules, the registration limit of
// the client's address (counted at the finish), Hooks.BeforeRegister and
// AfterRegister, the 24-hour verification link mailed, the session
// started; the passkey (a discoverable credential, user verification
// required) is stored with it, and a failure after the account was made
// (a credential stored already, a failed AfterRegister) deletes both.
//
// The begin tells nobody whether an address has an account: it checks the
// input but never looks the address up, so a taken and a free address get
// the same answer after the same work. The finish, once a credential was
// made and the registration limit counted, answers a taken address as
// Register does (400 email_already_registered) and makes nothing. Racing
// finishes of one ceremony make one account (the ceremony is taken once),
// racing sign-ups of one address too (the store's Create decides).
//
// Until its link is followed the account's address is unproven, so it
// adds no further passkey (auth.ErrEmailNotVerified), and an owner of the
// address who resets the password deletes its passkey and ends its
// sessions (SECURITY.md, deviations 15 and 23).
//
// # Re-authentication by passkey, and accounts without a password
//
// The reauth ceremony is "sudo mode" by passkey: it gives the session the
// same recent authentication (auth.Config.ReauthWindow) as POST
// /api/auth/confirm-password, through auth.Modules.Reauthenticate, and is
// audited as auth.EventReauthenticated. It requires user verification: a
// user-verified passkey is a multi-factor authenticator (the key held and
// the PIN or biometric that unlocks it), so on a 2FA account it counts as
// the password and the second factor at once; an assertion without the
// UV flag is auth.ErrPasskeyInvalid.
//
// An account without a password (signed up by email, a social provider or
// a passkey) re-authenticates this way and then does every change that
// needs a recent authentication: add a passkey, end sessions, turn 2FA on
// and off and change its email, the last two without the current password
// they ask of other accounts. It has no password to change: change-password
// answers auth.ErrPasswordNotSet, and it sets one through the password
// reset. Its last passkey cannot be deleted while it is its only way in
// (auth.ErrLastSignInMethod): no linked identity and sign-in by email off.
package passkeys

// Package passkeys adds WebAuthn passkeys to an authkit Service: as the
// second step of a 2FA login, and for passwordless sign-in with
// discoverable credentials (including the browser's autofill, "conditional
// UI").
//
// The WebAuthn ceremonies (CBOR, COSE, signatures, origin and RP ID checks)
// are github.com/go-webauthn/webauthn's; the decisions every sign-in method
// shares (the pending-login checks, the limits, the hooks, the session,
// audit events and notices) are core's, through
// auth.Service.FinishTwoFactor and auth.Service.SignInWithoutPassword; the
// credentials are kept by the user store's user.Passkeys part. This package
// joins them and serves JSON routes under Prefix:
//
//	POST /api/passkeys/register/begin   signed in, recent authentication: creation options
//	POST /api/passkeys/register/finish  the credential (PublicKeyCredential.toJSON()) and "name"
//	POST /api/passkeys/2fa/begin        a pending 2FA login: request options of the user's passkeys
//	POST /api/passkeys/2fa/finish       the assertion: the login is finished
//	POST /api/passkeys/login/begin      passwordless: request options for a discoverable credential
//	POST /api/passkeys/login/finish     the assertion: signed in
//	GET  /api/passkeys                  the signed-in user's passkeys
//	POST /api/passkeys/rename           {"id", "name"}
//	POST /api/passkeys/delete           {"id"}, recent authentication
//	GET  /api/passkeys/passkeys.js      the script that calls navigator.credentials
//
// Handler.OpenAPI returns the OpenAPI 3.1 document of the Service's routes
// with these JSON routes added (openapi.json, a part of core's document),
// each listing, for each status, the codes that route answers with.
//
// The Handler is an http.Handler. Mount it beside the framework module's
// routes, on Prefix and every path under it. net/http:
//
//	pk, err := passkeys.New(svc, passkeys.Config{
//		RPID:    "example.com",
//		Origins: []string{"https://example.com"},
//	})
//	mux := http.NewServeMux()
//	nethttpauth.Mount(mux, svc, "")
//	mux.Handle(passkeys.Prefix, pk)
//	mux.Handle(passkeys.Prefix+"/", pk)
//
// gin, with gin.WrapH:
//
//	r := ginauth.New(svc)
//	r.Any(passkeys.Prefix, gin.WrapH(pk))
//	r.Any(passkeys.Prefix+"/*path", gin.WrapH(pk))
//
// fiber, with fiberauth.HTTPHandler (fiber's adaptor, giving the handler
// fiber's UserContext rather than fasthttp's RequestCtx as its context):
//
//	app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{}))
//	fiberauth.Register(app, svc)
//	app.All(passkeys.Prefix, fiberauth.HTTPHandler(pk))
//	app.All(passkeys.Prefix+"/*", fiberauth.HTTPHandler(pk))
//
// e2e/passkeysflow runs the flow suite of package passkeystest on these
// three mounts.
//
// Every route is a thin layer over a typed method, as core's are: the
// ceremonies are [Handler.BeginRegistration], [Handler.FinishRegistration],
// [Handler.BeginTwoFactor], [Handler.FinishTwoFactor], [Handler.BeginLogin]
// and [Handler.FinishLogin]; list, rename and delete are core's
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
package passkeys

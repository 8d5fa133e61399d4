// Package auth holds authkit's flows: every route of the spec
// (docs/api.md: two-factor setup, login and recovery, email verification,
// password reset) plus logout, logout-everywhere, the current user and
// password change, written once as typed Go methods of [Service] and served
// as JSON routes over a framework-neutral [Request] and [Response].
//
// # The typed API
//
// Every flow is a method an app calls from Go: [Service.Register],
// [Service.Login], [Service.VerifyTwoFactor], [Service.RecoverTwoFactor],
// [Service.SetupTwoFactor], [Service.ConfirmTwoFactor],
// [Service.RegenerateRecoveryCodes], [Service.DisableTwoFactor],
// [Service.VerifyEmail], [Service.ResendVerification], [Service.ChangeEmail],
// [Service.ForgotPassword], [Service.ResetPassword], [Service.ChangePassword],
// [Service.ConfirmPassword], [Service.Logout], [Service.LogoutEverywhere],
// [Service.CurrentUser], [Service.RecentUser], and with a record store
// [Service.ListSessions], [Service.EndSession], [Service.TrustedDevices] and
// [Service.ForgetTrustedDevice], and with a store that implements
// user.Passkeys [Service.ListPasskeys], [Service.RenamePasskey] and
// [Service.DeletePasskey] (the passkeys module registers passkeys and
// serves these three as its routes), with email codes on
// [Service.SendTwoFactorEmailCode] and [Service.VerifyTwoFactorEmailCode],
// and with sign-in by email on ([Config.EmailSignIn])
// [Service.RequestEmailSignIn], [Service.VerifyEmailSignIn] and
// [Service.VerifyEmailSignInLink], and with personal API keys on
// ([Config.APIKeys], apikeys.go) [Service.CreateAPIKey],
// [Service.ListAPIKeys], [Service.RevokeAPIKey] and
// [Service.RevokeAllAPIKeys]: a key authenticates the app's own API through
// [Service.AuthenticateCredential] and [Service.AuthorizeScope] (RequireUser
// and RequireScope in the framework modules), never authkit's routes,
// which read the session cookie only. An app that checks passwords itself
// starts authkit's second step with [Service.StartSecondStep], keeping
// authkit's session or its own ([SecondStepInput].OwnSession).
// Each takes a context, a [Visit] (one request's cookies, client address
// and language, resolved once, and the cookies and headers its answer must
// carry) and a typed input, and returns a typed result or an error. The
// context is the call's only one: every store, hasher and hook call of the
// flow gets it (or the flow's context an Observer derives from it), so a
// caller's deadline, cancellation and trace hold for the whole call; the
// Visit holds none. The
// JSON routes only decode the body, call the method and render what it
// returns, so the two never disagree: rate limits, lock-out, replay
// protection, audit events, mail and cookies are the method's.
//
// Expected failures are [*Error] values with an HTTP status, a stable code
// and the spec's text ([Codes], docs/errors.md); errors.Is matches them by
// code. Anything else is a wrapped cause that [AsError] maps to 503 (a
// backend down) or 500; log it.
//
// An app changes the flows without forking them: [Config.Disable] switches
// features off ([Feature]: their routes are not registered, their methods
// fail with [ErrFeatureDisabled]), [Config.NameOptional] and
// [Config.RegisterFields] shape registration, [Hooks] veto or extend
// registration and login and hear of password and email changes, and
// [Config.Catalog] (package core/i18n) answers in the language a request
// asks for.
//
// A framework module (nethttpauth, ginauth, fiberauth) implements Request
// for its request type, registers [Modules.Routes], and writes the
// Response it gets back from [Modules.Handle]. Everything else happens
// here: body decoding (JSON or form, size-bounded, strict), validation,
// rate limits and their headers, the client address behind trusted
// proxies, cross-origin protection, cookies, mail and audit events. So
// every framework answers byte for byte the same.
//
// [Config.Observer] is told when each flow and each store call starts and
// ends, and of every security event, for metrics and traces; the otelauth
// module implements it on OpenTelemetry, so core imports no telemetry
// library. A flow is reported once, by its outermost entry: a JSON route
// through Handle, or a typed method an app or the pages module called
// directly, with the same name either way; modules report theirs with
// [Modules.Observe].
//
// Each route of the table carries its [Operation] (routes.go: its
// summary, body, result, cookies and the *Error values it answers), and a
// module adds its own routes with theirs ([Modules.AddRoutes], [NewRoute]:
// the passkeys module). [Service.OpenAPI] builds the OpenAPI 3.1 document
// of the table at run time: only the routes the Service registers, for an
// app to serve to its front-end and mobile teams (the example servers: GET
// /api/openapi.json; `authkit openapi` prints the one with every core
// route). The e2e module's openapi package checks every answer of the flow
// suites against it, and that every code a route lists is answered.
//
//	keys, _ := secretbox.ParseKeyring(os.Getenv("ENCRYPTION_KEY"))
//	svc, err := auth.New(auth.Config{
//		Users:   store.NewMemory(store.MemoryConfig{}), // or an sqlx store, or your own (core/user)
//		Secrets: strings.Split(os.Getenv("SESSION_SECRET"), ","),
//		Keys:    keys,
//		AppURL:  "https://app.example.com",
//		Mailer:  smtpMailer,
//	})
//	defer svc.Close(ctx)
//	nethttpauth.Mount(mux, svc, "")
//
// # Token mode
//
// With [Config.Tokens] on, a request with "Auth-Mode: token" or an
// Authorization: Bearer token is a token-mode [Visit]: every flow answers
// as for a browser, but the session it starts or renews comes in the
// body ([Visit.Tokens]: accessToken, refreshToken, expiresIn, tokenType)
// and a pending second step as pendingToken, instead of cookies;
// [Service.Authenticate] (RequireUser) takes the access token;
// [Service.RefreshTokens] rotates the refresh token, and a refresh token
// used twice ends its session. docs/mobile.md is the guide.
//
// # Support operations
//
// [Support] is what a support team does for one account, outside any
// request: [Support.Find] (what authkit holds, never a secret),
// [Support.Unlock], [Support.DisableTwoFactor] (TOTP and every passkey,
// with a notice mail), [Support.EndSessions], [Support.VerifyEmail] and
// [Support.DeleteAccount]. Each change takes an actor (who, and why) and is
// audited as a support_* event. [Service.Support] uses a Service's stores;
// [NewSupport] needs only the stores, no secret, for a tool such as
// `authkit user` (cmd/authkit):
//
//	sp := svc.Support()
//	_, err := sp.Unlock(ctx, userID, "carol: ticket 4711")
//
// # Passwords
//
// Config.PasswordPolicy decides which new passwords registration, reset and
// change accept. authkit keeps the spec's rule by default: 8 to 128
// characters for every account, any composition, no context words refused,
// so that the shortest configuration answers exactly as the spec does.
// password.NIST() follows NIST SP 800-63B rev. 4 (section 3.1.1.2): 15
// characters when the password is the account's only factor (every new
// account, and every account without 2FA), 8 beside 2FA, and no password
// built on the app's name (Config.AppName) or the account's address or
// name (400 password_context_word; the words do not count towards the
// minimum, so "Lovelace1815!" is refused for Ada Lovelace and a passphrase
// that holds her name among other words is not). A reset checks the
// bounds every account has before it reads the link, then the account's
// own. Apps that hold anything worth the stronger rule should set it
// (with Config.RequireTwoFactor, an account's 2FA is what lets it keep a
// password of 8).
//
// # Requiring two-factor
//
// Config.RequireTwoFactor (a TwoFactorPolicy) makes 2FA compulsory for
// every account, or for those its For picks, after a grace period (default
// 7 days from the account's creation or from the policy's Since). During
// the grace period nothing is refused: Service.TwoFactorRequirement tells
// an app to send the user to set 2FA up, and the pages module lands every
// sign-in on its security page. After it, Authenticate and
// AuthenticateVerified (RequireUser and RequireVerifiedEmail on every
// framework) answer 403 two_factor_required, and the pages' dashboard sends
// the user to set it up; authkit's own routes stay open, so the user can
// comply. Off by default: the spec's accounts sign in with a password, and
// requiring more is the app's announcement to make.
//
// # Choices where the spec is silent
//
//   - Status 200 for every success, including registration.
//   - Bodies are JSON (application/json, or no Content-Type) or form posts
//     (application/x-www-form-urlencoded) on every route, at most 16 KiB
//     (413 beyond). Unknown fields are ignored; wrong types, duplicate keys,
//     invalid UTF-8 and control or invisible formatting characters are 400
//     with a text naming the field; other content types are 415.
//   - New passwords: 8 to 128 characters after NFKC normalisation
//     (password.Policy; see Passwords), any Unicode; names: 1 to 200
//     characters; emails: a plain address of at most 254 bytes, trimmed,
//     NFKC-normalised and lowercased, the one form of every lookup, rate-limit
//     key and stored record (SECURITY.md deviation 16).
//   - /api/login and /api/auth/login are one handler: rate limits
//     and 2FA (docs/api.md, Login). A malformed email answers 401 "Invalid credentials"
//     like an unknown one, after the same password-hash work.
//   - A locked account (Config.Lockout) answers the same 401 as a wrong
//     password, and so does an account whose store holds no password hash
//     (a custom store's NULL column): an account that cannot log in with a
//     password is indistinguishable from no account.
//   - Every failed login costs the same work, with or without an account
//     (SECURITY.md "Timing"): one hash check (for unknown emails, against
//     the dummy hash New takes from the hasher's password.Decoy, or makes
//     by hashing a random password), and for an account that can fail, the lock-out's
//     failure count, written while the hash is checked so the answer never
//     waits for a write an unknown email does not make. A right password
//     then clears the count, so every successful login writes the store
//     once (ClearLoginFailures) while the lock-out is on.
//   - The 2FA verify and recover routes share one limit per user
//     (Limits.TwoFactor); the password re-entry of disable, change-email,
//     change-password and confirm-password has its own (Limits.Password).
//   - Re-authentication (SECURITY.md deviation 12): 2FA setup, confirm and
//     regenerate-codes, 2FA disable on a 2FA account, logout-everywhere and
//     adding or deleting a passkey need an authentication within
//     Config.ReauthWindow. Without 2FA a correct current password
//     (change-email, change-password, confirm-password) is one and leaves
//     the session recent; with 2FA only confirm-password with the second
//     factor (a TOTP or recovery code) or a login with both factors is.
//     The check comes right after the session's: a stale session gets the
//     403 before any other 400 of the route.
//   - Notices: 2FA turned on, recovery codes regenerated or used, and a
//     sign-in from a browser without the account's device cookie
//     (DeviceCookie, FeatureNewDeviceNotice) are mailed and audited.
//   - A new password is checked against Config.PasswordChecker after the
//     other rules (policy; for registration the address being free; for a
//     reset the link; for a change the current password), so that a
//     request bound to fail costs no call to a breach service.
//   - The remember flag of a 2FA login is the one sent to verify or
//     recover, else the one sent to login.
//   - Session records (Config.Sessions): ending another session needs a
//     recent authentication, ending one's own does not; an id that is not
//     the user's answers 404 session_not_found whatever it is; the changes
//     that raise the session version delete the other records (reset and
//     logout-all: every one). Without a record store (Config.StatelessSessions,
//     or a user store that offers none) the session routes are not
//     registered and the methods answer ErrFeatureDisabled.
//   - Secure defaults: session records where the user store holds them
//     (session.Provider), an idle timeout of 30 minutes for sessions
//     without "remember me" (a remembered session is the user's choice of
//     30 days; RememberIdleTimeout bounds it), a Secure session cookie
//     named "__Host-authkit_session", a re-authentication that retires
//     the cookie it came with, and a pending 2FA login that finishes once
//     (Config.PendingLogins).
//   - Trusted devices (Config.TrustedDevices): forgetting one needs no
//     recent authentication (it only takes a shortcut away); every change
//     that raises the session version ends every trust; a failure to
//     record a trust after a successful second step is logged and the
//     login stands.
//   - Email codes (Config.EmailCode) are off by default, not a Feature to
//     switch off: an app opts into the weakest factor, it is not handed
//     it. With them on, they are an alternative at the second step only:
//     no method turns 2FA on with one, so an account never has an email
//     code as its only factor. The address must be verified (403
//     email_code_needs_verified_email); sending counts against
//     Limits.EmailCode, checking against Limits.TwoFactor (with TOTP and
//     recovery codes); the right code past its lifetime answers
//     email_code_expired, any wrong code invalid_two_factor_code. The code
//     is hashed with a key of its own purpose and bound to the pending
//     login (SECURITY.md deviation 14).
//   - Backend failures (a store or a limiter store down) answer 503
//     {"error":"Service temporarily unavailable. Try again later."} with
//     Retry-After: 5 ([RetryAfterUnavailable]), and rate limiting fails
//     closed unless Config.RateLimitFailOpen is set. A request whose client
//     hung up is logged at debug level only.
//   - A login's attempt on the address key (login:ip) is counted before
//     the password check, so concurrent guesses never pass Limits.LoginIP,
//     and a correct password (also one a second factor follows) refunds
//     that one attempt (ratelimit.Refunder); the key is never reset
//     (SECURITY.md deviation 4). Correct logins from one address, an office
//     or a carrier's NAT, are never limited; failures are, however many
//     successes come between them. With a limit store that does not
//     implement ratelimit.Refunder every login counts, as the spec has it.
//   - Registration (register:ip) is not refunded: a registration is a
//     success, and refunding it would switch the limit off. An office or a
//     school that registers many people from one address raises it:
//     Config.Limits.Register = auth.Limit{Max: 50, Window: time.Hour}.
//     Limits.LoginIP is raised the same way, for many failed logins from
//     one address (a shared computer room). The example servers have no
//     environment variable for either: set them in code.
//   - A full in-memory limit store (Config.LimitCapacity keys, default
//     10,000) treats a new key by its kind (SECURITY.md deviation 10). A
//     client address (login:ip, register:ip, reset:ip) or a user id
//     (resend, 2fa, password, and NewRateLimit's keys) is limited, the
//     spec's rule: each costs an attacker an address or an account. An
//     email address (login:email, reset:email) is let through uncounted:
//     anyone can invent 10,000 addresses in a second, and refusing new
//     ones would lock every user out of login and silence every
//     forgot-password mail. The address limit and Config.Lockout still
//     bound guessing. Each full store is reported as EventLimitStoreFull
//     (Detail: the limit's name), at most once per limit per minute. A
//     process under attack, or more than one process, wants a shared
//     store (Config.LimitStore: redisstore, or sqlxstore's Limits), which
//     has no such capacity.
//   - A change that is saved is always reported: password change, email
//     change and 2FA disable mail their notice, write their audit event and
//     call their hook right after the store write, before the session is
//     renewed. When that session was ended meanwhile (a sign-out in another
//     tab or on another device, logout-everywhere, the support CLI), the
//     change still answers its 200 message, the session stays ended and its
//     cookie is expired: the client signs in again. Only a backend failure
//     renewing the session answers 503, the change saved.
//   - Renewing or re-authenticating a session (confirm-password, the
//     password routes) keeps its start: a session ends its lifetime after
//     its login however often it is confirmed, and a remembered cookie's
//     Max-Age is what is left of it.
//   - Passkeys (SECURITY.md deviation 15): adding one needs a verified
//     address while the email-verification feature is on; a password reset
//     and logout-everywhere delete every passkey, each audited and mailed;
//     logout-everywhere needs a recent authentication.
//   - Email change to the address the account already has answers 400
//     "Email already in use"; the new address is checked only after the
//     password, so a stolen session cannot probe addresses.
//
// The deliberate deviations from the spec are listed in SECURITY.md at the
// repository root.
package auth

// Package social is sign-in with outside identity providers: any OpenID
// Connect provider by its issuer URL (OIDC, discovery), or an OAuth 2.0
// provider of the app's own (Provider). It is a module of its own, so core
// never depends on golang.org/x/oauth2 or github.com/coreos/go-oidc, which
// do the protocol here: discovery, the authorization code with PKCE S256
// and a nonce, the ID token's signature, issuer, audience and expiry.
//
// New adds the routes to a Service's route table, so every framework
// module serves them:
//
//	GET    /api/auth/oauth/{provider}/start     302 to the provider (?returnTo=/path)
//	POST   /api/auth/oauth/{provider}/link      303 to the provider, to link it to the signed-in account
//	GET    /api/auth/oauth/{provider}/callback  303 to returnTo, the 2FA page, or the login page ?error={code}
//	POST   /api/auth/oauth/{provider}/callback  303 to the GET callback (a provider's form_post: Apple)
//	GET    /api/auth/identities                 {identities: [{id, provider, email, createdAt}]}
//	DELETE /api/auth/identities/{id}            {message}
//
// Each is thin over a typed method: Handler.Start, StartLink, Callback,
// Identities and Unlink. The decisions every sign-in shares stay core's
// (auth.Modules.SignInExternal, RegisterExternal): the limits, the
// registration switches and hooks, the second step of an account with 2FA,
// the session, the audit events.
//
//	prov, err := social.NewOIDC(social.OIDCConfig{Issuer: "https://accounts.google.com",
//		ClientID: id, ClientSecret: secret})
//	h, err := social.New(svc, social.Config{AppURL: "https://example.com",
//		Providers: []social.ProviderConfig{{Name: "google", Provider: prov, Authoritative: []string{"gmail.com"}}}})
//	defer h.Close()
//	http.ListenAndServe(":8080", nethttpauth.Handler(svc)) // after New
//
// # The state
//
// Start keeps the state, the nonce, the PKCE verifier and where to return
// in Config.States (a onetime.Store) under the hash of a random key, and
// sets that key in the authkit_oauth cookie (HttpOnly, SameSite=Lax, Path
// /api/auth/oauth, Secure on an https AppURL). The callback needs the
// cookie, the state equal to the kept one, and takes the kept sign-in
// once: a callback in another browser (login CSRF), a tampered state, a
// replayed callback or code, a second callback with the same state all
// fail with social_state_invalid and change nothing. The redirect URI is
// AppURL + "/api/auth/oauth/{name}/callback", the same in the
// authorization request and the token request; register exactly it at
// the provider. An iss parameter (RFC 9207), when sent, must be the
// provider's issuer; a provider whose discovery document announces it
// must send it. returnTo is kept only when it is a path of the app (one
// leading '/', no "//", no backslash, no control character); anything
// else lands on Config.DefaultReturnTo: no open redirect.
//
// # form_post (Apple)
//
// A provider asked for response_mode=form_post (the Apple preset) has its
// page POST the answer to the callback. That POST comes from the
// provider's site, so the browser does not send the SameSite=Lax state
// cookie with it; the POST callback (which takes posts from other sites:
// auth.Operation.CrossSite) changes nothing and answers a 303 to the GET
// callback with state, code, error, iss and user in the query (the rest,
// id_token among it, is dropped), a top-level navigation that does carry
// the cookie, and the GET callback checks everything as for any provider.
// The state cookie stays SameSite=Lax: SameSite=None would send it with
// every cross-site request to the callback's path. The code in the query
// is what a query-mode provider sends anyway (single use, redeemed only
// with the client secret, and the PKCE verifier where the provider checks
// it); Apple's user field (name and address, on the first sign-in only)
// passes through the query once.
//
// # Who signs in: no account takeover by linking
//
// The provider's account is its subject (the OpenID Connect "sub"), never
// its address. A subject already linked signs into its account. For one
// not linked yet:
//
//   - an account with the same address is linked automatically only when
//     the provider asserts the address verified, the provider is
//     configured authoritative for the address's domain
//     (ProviderConfig.Authoritative). When the account's own address was
//     never verified, the person who just proved it claims the account:
//     whoever registered it may not own the address, so its password,
//     TOTP, passkeys, sessions and trusted devices are revoked first
//     (auth.Modules.ClaimUnverified; SECURITY.md, deviation 23). Otherwise
//     the callback answers social_link_required: the
//     owner signs in to the account their usual way (password and second
//     factor), then links the provider from it (StartLink, which needs a
//     recent authentication). An unverified or mutable email claim (the
//     "nOAuth" class: Microsoft's email claim) never opens an account.
//   - without such an account, one is created without a password, its
//     address verified (the registration switches and hooks apply;
//     social_signup_closed with public sign-up off), when the provider
//     asserts the address verified and is authoritative for it
//     (social_email_unverified otherwise). An account made on a claim the
//     app does not trust would be a door for whoever made it once the
//     address's real owner arrives (account pre-hijacking).
//
// An account with 2FA takes its second step after a social sign-in (the
// callback sends the browser to Config.TwoFactorPath with the 2fa_pending
// cookie), unless the browser is a trusted device.
//
// # Unlinking
//
// Unlink needs a recent authentication and refuses
// (last_sign_in_method) to remove the last way into an account: an
// account without a password and without a passkey keeps one identity;
// the store's DeleteIdentity applies that condition atomically, so of two
// racing unlinks of the last two one fails.
//
// # Errors
//
// Start and the callback never answer JSON or 5xx to the browser: a
// failure is a 303 to Config.LoginPath with ?error={code}
// (docs/errors.md); a provider that is down or slow (Config.Timeout) is
// social_provider_unavailable. The causes go to the Service's log.
package social

// Package session is the spec's createAuth: login, logout and the current
// user, kept in a signed cookie that a framework module reads and writes
// through a [CookieBridge] (or, in token mode, in tokens a client without
// cookies holds: see "Token mode" below). Checking a password is
// core/auth's Login, with its limits and lock-out.
//
//	m, err := session.New(session.Config{
//		Secrets:     []string{os.Getenv("SESSION_SECRET")},
//		ResolveUser: store.UserByID, // (nil, nil) when unknown
//	})
//	...
//	// per request, with the framework's bridge:
//	s := m.Session(bridge)
//	u, err := s.User(ctx)
//	if errors.Is(err, session.ErrNotAuthenticated) {
//		// 401 {"error": "Not authenticated"}
//	}
//
// # The cookie
//
// Without Config.Store the session lives only in the cookie (by default
// "authkit_session"; core/auth names it "__Host-authkit_session" when it is
// Secure, and gives the Manager a Store wherever the user store offers
// one); with Config.Store it also has a server-side
// [Record] (see "Records" below). Its value is a [token] made for the purpose "session"
// (so no other authkit token verifies as a session) holding the user id,
// the issue time and, as the token's data, a flags byte (bit 0: remember;
// bit 1: the authentication time follows), the user's SessionVersion as a
// signed varint, and the time of the last authentication (a Login or a
// [Session.Reauthenticate]) in Unix milliseconds as a signed varint. Cookies
// made before that time was recorded lack bit 1 and the time: they still
// authenticate, and [Session.AuthenticatedAt] is zero for them, so they are
// never recent enough for a re-authentication check ("sudo mode").
//
// Attributes: HttpOnly, SameSite=Lax, Path=/, host-only, and Secure unless
// Config.Insecure (development over plain HTTP only). Without remember the
// cookie has no Max-Age, so the browser drops it when it closes, and the
// server refuses it 24 hours after its issue time (Config.Lifetime). With
// remember it has Max-Age 2592000 and the server accepts it for 30 days
// (Config.RememberLifetime). Lifetimes are enforced from the signed issue
// time, never from the browser's expiry.
//
// # When a session ends
//
// [Session.User] treats a session as invalid, expires its cookie and
// returns [ErrNotAuthenticated] when the token does not verify, is older
// than its lifetime, names a user that ResolveUser no longer finds, was
// issued in a whole second below floor(passwordChangedAt_ms / 1000) (spec
// 3.4: the comparison is in seconds, so a session issued in the second of a
// password change survives that rule), or carries a SessionVersion below
// the user's. Flows that change the password, reset it, disable 2FA or
// change the email bump SessionVersion in the store, which ends every
// older session including those of the same second; [Session.Renew] then
// re-issues the current request's cookie when that session should go on.
// [Manager.User] applies the same checks to a cookie value without a
// Session or a bridge and expires nothing: the read-only path of
// middleware (core/auth's Authenticate), which falls back to Session.User
// to answer a request that fails.
//
// Without a Store the token is stateless: Logout expires the cookie on this
// client only; a stolen copy stays valid until it expires or the version is
// bumped.
//
// # Records
//
// With Config.Store every Login creates a [Record] (user, created, last
// seen, client address and User-Agent from [Session.SetClient], remember,
// end of lifetime) under a random 128-bit id, and the cookie carries that
// id after the authentication time (flags bit 2, then 16 bytes). Every
// check then reads the record once: a missing record (logged out, ended
// from a list, deleted by a version-bumping change), another user's, one
// past its end, or one idle for Config.IdleTimeout ends the session. Last
// use is written back at most once per Config.TouchInterval (1 minute), so
// a busy session costs one read per request and one write a minute. Logout
// deletes the record, so every copy of the cookie dies. A cookie without a
// record is refused while a Store is configured; a cookie with one is
// accepted as a stateless cookie where none is (an app that turns records
// off keeps its users signed in).
//
// # Rotation
//
// Config.Secrets works as in package token: the first secret signs, every
// secret verifies.
//
// # Token mode
//
// With Config.Tokens (a one-time store for the refresh families, and a
// Store: a token-mode session is a record) [Manager.TokenSession] is the
// session of a request that came with a bearer access token instead of
// the cookie. It is checked as the cookie is; Login, Renew and
// Reauthenticate hand out an access token ("akat_", the cookie's data
// under the purpose "access", 15 minutes by default) and a refresh token
// ("akrt_", the record's id and a generation under the purpose
// "refresh") through [Session.Tokens]; [Session.Refresh] turns a refresh
// token into the next pair once, and a refresh token used a second time
// ends the session ([ErrRefreshReused]). tokens.go says how.
package session

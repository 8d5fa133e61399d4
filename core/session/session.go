package session

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/user"
)

// ErrNotAuthenticated is returned by [Session.User] when the request has no
// valid session: no cookie, a cookie that does not verify or has expired,
// a user that no longer exists, or a session ended by a password change or
// a session-version bump. Flows answer 401 "Not authenticated". The error
// may wrap the reason (for example [token.ErrExpired]) for logs; test for it
// with errors.Is.
var ErrNotAuthenticated = errors.New("session: not authenticated")

// ErrInvalidConfig wraps every error from [New].
var ErrInvalidConfig = errors.New("session: invalid config")

// Reasons wrapped by ErrNotAuthenticated, for logs.
var (
	errUserGone        = errors.New("user no longer exists")
	errPasswordChanged = errors.New("session predates the last password change")
	errVersion         = errors.New("session version revoked")
	errData            = errors.New("malformed session data")
	errRecordGone      = errors.New("session record ended")
	errNoRecord        = errors.New("session cookie without a record, while records are kept")
	errIdle            = errors.New("session idle too long")
)

const (
	// DefaultCookieName is the session cookie's name unless
	// Config.CookieName says otherwise.
	DefaultCookieName = "authkit_session"

	// Purpose is the token purpose of session cookies. No other authkit
	// token verifies as a session, and a session cookie verifies as no
	// other token.
	Purpose = "session"
)

// CookieOptions are the attributes of a cookie that authkit sets. A
// framework's CookieBridge maps them onto its own cookie type.
type CookieOptions struct {
	HTTPOnly bool          // the HttpOnly attribute
	Secure   bool          // the Secure attribute
	SameSite http.SameSite // the SameSite attribute; authkit uses Lax
	Path     string        // the Path attribute
	Domain   string        // the Domain attribute; empty: a host-only cookie

	// MaxAge is the lifetime in seconds; 0 means no Max-Age attribute (a
	// browser-session cookie).
	MaxAge int
}

// CookieBridge gives a Session access to the cookies of one request and its
// response. Each framework module implements it (net/http, gin, fiber).
type CookieBridge interface {
	// Set adds a Set-Cookie to the response.
	Set(name, value string, opts CookieOptions)

	// Get returns the value of the named cookie of the request, and whether
	// the request carried it. It reports what the client sent: it does not
	// see cookies set or deleted on the response.
	Get(name string) (string, bool)

	// Delete expires the named cookie on the client: a Set-Cookie with an
	// empty value, the given Path and Domain, and Max-Age<0 (or an Expires
	// in the past). MaxAge in opts is ignored.
	Delete(name string, opts CookieOptions)
}

// Config configures a [Manager]. The zero value of each optional field
// means the documented default. New copies what it needs; it never changes
// the Config.
type Config struct {
	// Secrets sign the session cookie: SESSION_SECRET. The first signs,
	// all verify (rotation); each at least 32 bytes. See package token.
	// Required.
	Secrets []string

	// ResolveUser loads a user by id. It returns (nil, nil) when there is no
	// such user: the session then ends. Any error is a backend failure:
	// Session.User returns it wrapped and leaves the cookie alone, so a
	// flow can answer 503 instead of logging the user out. Required.
	ResolveUser func(ctx context.Context, id string) (*user.User, error)

	// CookieName is the session cookie's name. Default: "authkit_session".
	CookieName string

	// Lifetime is how long a session lasts without "remember me". The
	// cookie has no Max-Age (the browser drops it when it closes) and the
	// server refuses it once it is Lifetime old. Default: 24 hours.
	Lifetime time.Duration

	// RememberLifetime is how long a "remember me" session lasts; the
	// cookie gets Max-Age of that many whole seconds. At least one second.
	// Default: 30 days.
	RememberLifetime time.Duration

	// Insecure drops the Secure attribute from the cookie. Default: false,
	// so cookies are Secure (recommended). The example servers set it only
	// in development, over plain http://localhost.
	Insecure bool

	// Path is the cookie's Path. Default: "/".
	Path string

	// Domain is the cookie's Domain. Default: "" (a host-only cookie,
	// recommended).
	Domain string

	// Store keeps a server-side record of every session (see [Store]):
	// the cookie then carries the record's id, a session can be listed and
	// ended one by one, and Logout ends the record, so a copy of the cookie
	// dies with it. A cookie without a record (made while no Store was
	// configured) is then refused. Default: nil, stateless cookies.
	Store Store

	// IdleTimeout ends a session with a record that no request used for
	// that long (its LastSeenAt, written at most once per TouchInterval,
	// so the timeout is exact to within TouchInterval). Needs Store.
	// Default: 0, off.
	IdleTimeout time.Duration

	// RememberIdleTimeout is IdleTimeout for a "remember me" session, a
	// long session the user asked for on a device of their own. Needs
	// Store. Default: 0, IdleTimeout applies to it too. Negative: none
	// (it lasts RememberLifetime however seldom it is used).
	RememberIdleTimeout time.Duration

	// TouchInterval is how stale a record's LastSeenAt may grow before a
	// request writes it again. Default: 1 minute.
	TouchInterval time.Duration

	// MaxPerUser bounds the records one user holds in Store: a login that
	// would pass it ends the user's oldest sessions (by CreatedAt), so
	// that no account collects records without end. With a [Bounded] store
	// the bound is kept in the store's own step. Default:
	// DefaultMaxPerUser (100). Negative: no bound.
	MaxPerUser int

	// Tokens turns on token mode (see [Manager.TokenSession]): sessions
	// of clients without cookies, held as an access and a refresh token.
	// Needs Store. Default: off.
	Tokens TokenConfig

	// Now returns the current time. Default: time.Now.
	Now func() time.Time

	// Rand makes record ids. Default: crypto/rand.Reader.
	Rand io.Reader
}

// A Manager is the spec's createAuth: it holds the configuration, and makes
// a [Session] for each request. It is safe for concurrent use.
type Manager struct {
	tokens           *token.Verifier
	resolveUser      func(ctx context.Context, id string) (*user.User, error)
	name             string
	lifetime         time.Duration
	rememberLifetime time.Duration
	cookie           CookieOptions // MaxAge 0
	now              func() time.Time
	store            Store // nil: stateless cookies
	idle             time.Duration
	rememberIdle     time.Duration // < 0: none
	touch            time.Duration
	maxPerUser       int // < 1: no bound
	rand             io.Reader

	// Token mode (tokens.go): nil without Config.Tokens.
	access   *token.Verifier
	refresh  *token.Verifier
	families onetime.Store
}

// New returns a Manager for cfg.
func New(cfg Config) (*Manager, error) {
	if cfg.ResolveUser == nil {
		return nil, fmt.Errorf("%w: ResolveUser is required", ErrInvalidConfig)
	}
	m := &Manager{
		resolveUser:      cfg.ResolveUser,
		name:             cfg.CookieName,
		lifetime:         cfg.Lifetime,
		rememberLifetime: cfg.RememberLifetime,
		now:              cfg.Now,
		store:            cfg.Store,
		idle:             cfg.IdleTimeout,
		rememberIdle:     cfg.RememberIdleTimeout,
		touch:            cfg.TouchInterval,
		maxPerUser:       cfg.MaxPerUser,
		rand:             cfg.Rand,
		cookie: CookieOptions{
			HTTPOnly: true,
			Secure:   !cfg.Insecure,
			SameSite: http.SameSiteLaxMode,
			Path:     cfg.Path,
			Domain:   cfg.Domain,
		},
	}
	if m.name == "" {
		m.name = DefaultCookieName
	}
	if m.lifetime == 0 {
		m.lifetime = 24 * time.Hour
	}
	if m.rememberLifetime == 0 {
		m.rememberLifetime = 30 * 24 * time.Hour
	}
	if m.cookie.Path == "" {
		m.cookie.Path = "/"
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.touch <= 0 {
		m.touch = time.Minute
	}
	if m.maxPerUser == 0 {
		m.maxPerUser = DefaultMaxPerUser
	}
	if m.rand == nil {
		m.rand = rand.Reader
	}
	if m.idle < 0 || (m.idle > 0 && m.store == nil) {
		return nil, fmt.Errorf("%w: IdleTimeout needs a Store and must not be negative", ErrInvalidConfig)
	}
	if m.rememberIdle > 0 && m.store == nil {
		return nil, fmt.Errorf("%w: RememberIdleTimeout needs a Store", ErrInvalidConfig)
	}
	if m.rememberIdle == 0 {
		m.rememberIdle = m.idle
	}
	if !isToken(m.name) {
		return nil, fmt.Errorf("%w: CookieName %q is not a valid cookie name", ErrInvalidConfig, m.name)
	}
	if m.cookie.Path[0] != '/' || !isAttrValue(m.cookie.Path) {
		return nil, fmt.Errorf("%w: Path %q must start with / and hold only printable ASCII without spaces or ';'", ErrInvalidConfig, m.cookie.Path)
	}
	if !isAttrValue(m.cookie.Domain) {
		return nil, fmt.Errorf("%w: Domain %q holds ';', a space or a control character", ErrInvalidConfig, m.cookie.Domain)
	}
	if m.lifetime < 0 {
		return nil, fmt.Errorf("%w: Lifetime must be positive", ErrInvalidConfig)
	}
	if m.rememberLifetime < time.Second {
		return nil, fmt.Errorf("%w: RememberLifetime must be at least one second", ErrInvalidConfig)
	}
	v, err := token.NewVerifier(token.Config{
		Secrets: cfg.Secrets,
		Purpose: Purpose,
		Expiry:  max(m.lifetime, m.rememberLifetime),
		Now:     m.now,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	m.tokens = v
	if err := m.tokenMode(cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return m, nil
}

// Idle reports whether record r is past its idle timeout at now:
// Config.IdleTimeout, or RememberIdleTimeout for a "remember me" session.
func (m *Manager) Idle(r Record, now time.Time) bool {
	idle := m.idle
	if r.Remember {
		idle = m.rememberIdle
	}
	return idle > 0 && !now.Before(r.LastSeenAt.Add(idle))
}

// CookieName returns the session cookie's name.
func (m *Manager) CookieName() string { return m.name }

// Store returns Config.Store: nil when sessions are stateless cookies.
func (m *Manager) Store() Store { return m.store }

// Session returns the session of one request, reading and writing cookies
// through c. A Session belongs to its request: it caches the user it
// resolves and is not safe for concurrent use.
func (m *Manager) Session(c CookieBridge) *Session {
	return &Session{m: m, cookies: c}
}

// A Session is the spec's auth() object for one request: Login, Logout,
// User. It is not safe for concurrent use.
type Session struct {
	m       *Manager
	cookies CookieBridge

	state    state
	user     *user.User // when state == authenticated
	remember bool       // when state == authenticated
	authAt   time.Time  // when state == authenticated: the last authentication; zero when the cookie predates it
	start    time.Time  // when state == authenticated: when the session began (its Login), which its lifetime counts from
	record   string     // when state == authenticated: the record id; "" without a Store
	expires  time.Time  // when state == authenticated with a record: the record's ExpiresAt as read

	ip, userAgent string // what a new record stores (SetClient)

	// Token mode (tokens.go): the session is the bearer access token the
	// request came with, and what Login, Renew and Reauthenticate issue
	// is handed out as tokens, not set as a cookie.
	tokenMode bool
	bearer    string  // the request's access token, prefix included; "" for none
	minted    *Tokens // the tokens issued in this request
}

// SetClient sets what a record made by a later Login of this Session
// stores: the client address and the User-Agent header (cut to 512
// bytes). Without a Store it does nothing.
func (s *Session) SetClient(ip, userAgent string) {
	if len(userAgent) > maxUserAgent {
		userAgent = userAgent[:maxUserAgent]
	}
	s.ip, s.userAgent = ip, userAgent
}

// maxUserAgent bounds the User-Agent a record keeps.
const maxUserAgent = 512

// RecordID returns the id of the record of this request's session once
// [Session.User] or Login has succeeded: "" without a Store or a session.
func (s *Session) RecordID() string {
	if s.state != authenticated {
		return ""
	}
	return s.record
}

type state uint8

const (
	unknown state = iota // the cookie has not been read yet
	anonymous
	authenticated
)

// Login starts a session for u: it sets the session cookie, and makes u the
// Session's user for the rest of the request. With remember the cookie has
// Max-Age RememberLifetime and the session lasts that long; without, it is a
// browser-session cookie and the session lasts Lifetime. The cookie carries
// u.ID, the issue time, u.SessionVersion and the time of authentication
// (now: a Login is an authentication), so u must be the current record
// (after any version bump).
//
// A fresh token is issued on every Login, so a session id planted before
// login (session fixation) is never promoted.
//
// With a Store, Login first creates the session's record (its error, which
// wraps the store's, is returned and no cookie is set), ending the user's
// oldest sessions past Config.MaxPerUser.
func (s *Session) Login(ctx context.Context, u *user.User, remember bool) error {
	if u == nil || u.ID == "" {
		return errors.New("session: Login needs a user with an ID")
	}
	if s.tokenMode && s.m.families == nil {
		return errors.New("session: token mode is off (Config.Tokens)")
	}
	now := s.m.now()
	record := ""
	if s.m.store != nil {
		var err error
		if record, err = s.m.newRecord(ctx, u.ID, remember, now, s.ip, s.userAgent); err != nil {
			return err
		}
	}
	return s.issue(ctx, u, remember, now, now, record, 0)
}

// newRecord stores a new record and returns its id.
func (m *Manager) newRecord(ctx context.Context, userID string, remember bool, now time.Time, ip, ua string) (string, error) {
	var b [recordIDLen]byte
	if _, err := io.ReadFull(m.rand, b[:]); err != nil {
		return "", fmt.Errorf("session: record id: %w", err)
	}
	now = now.Truncate(time.Millisecond)
	r := Record{ID: hex.EncodeToString(b[:]), UserID: userID, CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(m.life(remember)), IP: ip, UserAgent: ua, Remember: remember}
	if err := CreateBounded(ctx, m.store, r, m.maxPerUser); err != nil {
		return "", fmt.Errorf("session: create record: %w", err)
	}
	return r.ID, nil
}

func (m *Manager) life(remember bool) time.Duration {
	if remember {
		return m.rememberLifetime
	}
	return m.lifetime
}

// issue sets a fresh session cookie for u with the given remember choice,
// authentication time, start of the session and record id ("" for none).
// A remembered cookie's Max-Age is what is left of the session's lifetime.
//
// In token mode the session is handed out as tokens ([Session.Tokens]):
// an access token with the same data, and the refresh token of generation
// gen of the record's family.
func (s *Session) issue(ctx context.Context, u *user.User, remember bool, authAt, start time.Time, record string, gen uint64) error {
	if u == nil || u.ID == "" {
		return errors.New("session: Login needs a user with an ID")
	}
	start = start.Truncate(time.Millisecond)
	d, err := appendData(nil, remember, u.SessionVersion, authAt, start, record)
	if err != nil {
		return fmt.Errorf("session: login: %w", err)
	}
	if s.tokenMode {
		if err := s.issueTokens(ctx, u, d, record, gen, familyState{remember: remember, version: u.SessionVersion, authAt: authAt, start: start}); err != nil {
			return err
		}
		s.state, s.user, s.remember, s.authAt, s.start, s.record = authenticated, u, remember, authAt.Truncate(time.Millisecond), start, record
		return nil
	}
	tok, err := s.m.tokens.CreateWith(u.ID, d)
	if err != nil {
		return fmt.Errorf("session: login: %w", err)
	}
	opts := s.m.cookie
	if remember {
		left := start.Add(s.m.rememberLifetime).Sub(s.m.now().Truncate(time.Millisecond))
		opts.MaxAge = max(1, int((left+time.Second-1)/time.Second)) // whole seconds, rounded up
	}
	s.cookies.Set(s.m.name, tok, opts)
	s.state, s.user, s.remember, s.authAt, s.start, s.record = authenticated, u, remember, authAt.Truncate(time.Millisecond), start, record
	return nil
}

// Renew issues a fresh cookie for the current session, keeping its
// "remember me" choice, its time of authentication and its start, for u:
// the current user after a change that raised its session version and so
// ended the other sessions (this request's session carries on). The
// session still ends its lifetime after its Login: no renewal extends it.
// It returns
// ErrNotAuthenticated when this request has no session (User or Login must
// have succeeded first), and an error when u is not the session's user.
func (s *Session) Renew(ctx context.Context, u *user.User) error {
	if err := s.renewable(ctx, u); err != nil {
		return err
	}
	gen, err := s.nextGen(ctx, s.record)
	if err != nil {
		return err
	}
	return s.issue(ctx, u, s.remember, s.authAt, s.start, s.record, gen)
}

// Reauthenticate is Renew after the user proved themselves again in this
// request (re-entered the current password): the renewed session's time of
// authentication is now, so [Session.AuthenticatedAt] is recent; like
// Renew it keeps the session's start, so confirming again and again never
// keeps a session alive past its lifetime. Flows that
// change the password or the factors and check the current password use it,
// as does a password confirmation ("sudo mode").
//
// With a Store the session moves to a new record (the old one's creation,
// expiry, client and remember choice, a new id) and the old record is
// retired: it ends RetireGrace (10 seconds) after the re-authentication,
// so the cookie the request came with, and any copy of it, stops working
// then (requests already under way with it, in other tabs, still finish);
// a copy taken before never shares the new, recent session, whose time of
// authentication only the new cookie carries. A record ended meanwhile (a
// logout racing this request) ends the session here too:
// ErrNotAuthenticated, and no new record stays.
// Stateless cookies cannot retire a copy; it lives until its lifetime
// ends, as after a logout.
func (s *Session) Reauthenticate(ctx context.Context, u *user.User) error {
	if err := s.renewable(ctx, u); err != nil {
		return err
	}
	record := s.record
	if record != "" && s.m.store != nil {
		old := record
		var err error
		if record, err = s.rotate(ctx); err != nil {
			return err
		}
		if s.tokenMode {
			s.dropFamily(ctx, old)
		}
	}
	return s.issue(ctx, u, s.remember, s.m.now(), s.start, record, 0)
}

// RetireGrace is how long the record of a session stays usable after a
// re-authentication moved the session to a new one.
const RetireGrace = 10 * time.Second

// rotate moves the session's record to a new id and retires the old one
// (its expiry RetireGrace from now): create first, then retire, so that a
// Delete or DeleteAll racing it either finds the old record (the retire
// here then fails, and the new one is removed) or runs after and removes
// both.
func (s *Session) rotate(ctx context.Context) (string, error) {
	old, err := s.m.store.Get(ctx, s.record)
	switch {
	case errors.Is(err, user.ErrNotFound):
		return "", s.end(errRecordGone)
	case err != nil:
		return "", fmt.Errorf("session: reauthenticate: %w", err)
	case old.UserID != s.user.ID:
		return "", s.end(errRecordGone)
	}
	var b [recordIDLen]byte
	if _, err := io.ReadFull(s.m.rand, b[:]); err != nil {
		return "", fmt.Errorf("session: record id: %w", err)
	}
	now := s.m.now().Truncate(time.Millisecond)
	r := old
	r.ID = hex.EncodeToString(b[:])
	r.LastSeenAt = now
	if err := s.m.store.Create(ctx, r); err != nil {
		return "", fmt.Errorf("session: reauthenticate: create record: %w", err)
	}
	retire := now.Add(RetireGrace)
	if old.ExpiresAt.Before(retire) {
		retire = old.ExpiresAt
	}
	if err := s.m.store.Touch(ctx, old.ID, old.LastSeenAt, retire); err != nil {
		if derr := s.m.store.Delete(ctx, r.UserID, r.ID); derr != nil && !errors.Is(derr, user.ErrNotFound) {
			return "", fmt.Errorf("session: reauthenticate: remove new record: %w", derr)
		}
		if errors.Is(err, user.ErrNotFound) {
			return "", s.end(errRecordGone)
		}
		return "", fmt.Errorf("session: reauthenticate: retire old record: %w", err)
	}
	s.expires = r.ExpiresAt
	return r.ID, nil
}

// renewable checks that the session can be renewed for u and, with a
// Store, touches its record (its expiry stays the session's): a record
// ended meanwhile is ErrNotAuthenticated.
func (s *Session) renewable(ctx context.Context, u *user.User) error {
	if s.state != authenticated {
		return ErrNotAuthenticated
	}
	if u == nil || u.ID != s.user.ID {
		return errors.New("session: Renew with another user; use Login")
	}
	if s.record != "" && s.m.store != nil {
		now := s.m.now().Truncate(time.Millisecond)
		expires := s.expires // as read: a record retired by a re-authentication stays retired
		if expires.IsZero() {
			expires = s.start.Add(s.m.life(s.remember))
		}
		if err := s.m.store.Touch(ctx, s.record, now, expires); err != nil {
			if errors.Is(err, user.ErrNotFound) {
				return s.end(errRecordGone)
			}
			return fmt.Errorf("session: renew record: %w", err)
		}
	}
	return nil
}

// AuthenticatedAt returns when the user of this request's session last
// authenticated (a Login, or a Reauthenticate), to the millisecond, once
// [Session.User] or Login has succeeded; the zero time before that, without
// a session, and for a cookie made before authkit recorded the time (such a
// cookie still authenticates; it is just never recent).
func (s *Session) AuthenticatedAt() time.Time {
	if s.state != authenticated {
		return time.Time{}
	}
	return s.authAt
}

// Logout ends the session: it expires the cookie, and User returns
// ErrNotAuthenticated for the rest of the request. It is idempotent.
// Without a Store a session token is stateless, so a copy of the cookie
// stays valid until it expires; to end every session of a user, bump the
// user's SessionVersion in the store. With a Store, Logout also deletes
// the record the request's cookie names (when the cookie verifies), so
// every copy of the cookie dies; the error is then the store's, wrapped
// (the cookie is expired all the same). Without a Store the error is
// always nil.
func (s *Session) Logout(ctx context.Context) error {
	var err error
	if s.m.store != nil {
		err = s.deleteRecord(ctx)
	}
	if !s.tokenMode {
		s.cookies.Delete(s.m.name, s.m.cookie)
	}
	s.state, s.user, s.remember, s.authAt, s.start, s.record = anonymous, nil, false, time.Time{}, time.Time{}, ""
	return err
}

// deleteRecord deletes the record of the request's session, known or read
// from a cookie that verifies (a cookie past its token expiry names a
// record past its ExpiresAt, which the Manager refuses anyway).
func (s *Session) deleteRecord(ctx context.Context) error {
	userID, record := "", ""
	switch s.state {
	case authenticated:
		userID, record = s.user.ID, s.record
	case unknown:
		raw, v := s.credential()
		if raw == "" {
			return nil
		}
		c, err := v.Verify(raw)
		if err != nil {
			return nil
		}
		d, err := parseData(c.Data)
		if err != nil {
			return nil
		}
		userID, record = c.UserID, d.record
	}
	if record == "" {
		return nil
	}
	if err := s.m.store.Delete(ctx, userID, record); err != nil && !errors.Is(err, user.ErrNotFound) {
		return fmt.Errorf("session: logout: %w", err)
	}
	return nil
}

// User returns the user of the request's session. The first call reads and
// verifies the cookie and calls ResolveUser; the result is cached for the
// rest of the request, so later calls cost nothing (the returned record is
// shared between them).
//
// Without a valid session it returns ErrNotAuthenticated, and when the
// request carried a session cookie that is no longer valid it also expires
// that cookie. A session is invalid when its token does not verify, it is
// older than its lifetime, the user no longer exists, its issue time in
// whole seconds is below floor(PasswordChangedAt in ms / 1000) (the spec's rule),
// or its session version is below u.SessionVersion.
//
// An error from ResolveUser is returned wrapped; the cookie is kept and
// nothing is cached, so a later call tries again.
func (s *Session) User(ctx context.Context) (*user.User, error) {
	switch s.state {
	case authenticated:
		return s.user, nil
	case anonymous:
		return nil, ErrNotAuthenticated
	}
	raw, v := s.credential()
	if raw == "" {
		s.state = anonymous
		return nil, ErrNotAuthenticated
	}
	u, d, reason, err := s.m.resolve(ctx, v, raw)
	if err != nil {
		return nil, err
	}
	if reason != nil {
		return nil, s.end(reason)
	}
	s.state, s.user, s.remember, s.authAt, s.start, s.record = authenticated, u, d.remember, d.authAt, d.start, d.record
	s.expires = d.expires
	return u, nil
}

// User returns the user of a session cookie's value, checked exactly as
// [Session.User] checks it, for middleware that only reads: it needs no
// [CookieBridge] and makes no Session, and it expires nothing. An invalid
// session is ErrNotAuthenticated (wrapping the reason); an error from
// ResolveUser is returned wrapped. A request that fails here and must
// answer (expiring the dead cookie) goes through Session.User.
func (m *Manager) User(ctx context.Context, cookieValue string) (*user.User, error) {
	if cookieValue == "" {
		return nil, ErrNotAuthenticated
	}
	return m.readUser(ctx, m.tokens, cookieValue)
}

// readUser is resolve for the read-only lookups (Manager.User,
// Manager.AccessUser): the user of a valid session, or
// ErrNotAuthenticated wrapping the reason it is not.
func (m *Manager) readUser(ctx context.Context, v *token.Verifier, raw string) (*user.User, error) {
	u, _, reason, err := m.resolve(ctx, v, raw)
	if err != nil {
		return nil, err
	}
	if reason != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotAuthenticated, reason)
	}
	return u, nil
}

// resolve checks the session cookie value raw (or, with v the access
// token verifier, an access token without its prefix): the user and the data of a
// valid session; the reason a session is invalid; or an error from
// ResolveUser, wrapped.
func (m *Manager) resolve(ctx context.Context, v *token.Verifier, raw string) (u *user.User, d data, reason, err error) {
	c, err := v.Verify(raw)
	if err != nil {
		return nil, data{}, err, nil
	}
	d, err = parseData(c.Data)
	if err != nil {
		return nil, data{}, err, nil
	}
	life := m.lifetime
	if d.remember {
		life = m.rememberLifetime
	}
	if d.start.IsZero() { // a cookie made before authkit recorded the start
		d.start = c.IssuedAt.Truncate(time.Millisecond)
	}
	now := m.now()
	if !now.Before(d.start.Add(life)) || !now.Before(c.IssuedAt.Add(life)) {
		return nil, data{}, token.ErrExpired, nil
	}
	var rec Record
	if m.store != nil {
		if d.record == "" {
			return nil, data{}, errNoRecord, nil
		}
		rec, err = m.store.Get(ctx, d.record)
		switch {
		case errors.Is(err, user.ErrNotFound):
			return nil, data{}, errRecordGone, nil
		case err != nil:
			return nil, data{}, nil, fmt.Errorf("session: record: %w", err)
		case rec.UserID != c.UserID || !now.Before(rec.ExpiresAt):
			return nil, data{}, errRecordGone, nil
		case m.Idle(rec, now):
			// Ended for good, so no copy of the cookie finds it again.
			if err := m.store.Delete(ctx, rec.UserID, rec.ID); err != nil && !errors.Is(err, user.ErrNotFound) {
				return nil, data{}, nil, fmt.Errorf("session: end idle record: %w", err)
			}
			return nil, data{}, errIdle, nil
		}
	}
	d.expires = rec.ExpiresAt
	u, err = m.resolveUser(ctx, c.UserID)
	if err != nil {
		return nil, data{}, nil, fmt.Errorf("session: resolve user: %w", err)
	}
	if u == nil {
		return nil, data{}, errUserGone, nil
	}
	if !u.PasswordChangedAt.IsZero() && floorDiv(c.IssuedAtMs(), 1000) < floorDiv(u.PasswordChangedAt.UnixMilli(), 1000) {
		return nil, data{}, errPasswordChanged, nil
	}
	if d.version < u.SessionVersion {
		return nil, data{}, errVersion, nil
	}
	if m.store != nil && !now.Before(rec.LastSeenAt.Add(m.touch)) {
		// At most one write per TouchInterval: LastSeenAt for the list and
		// the idle timeout. Touch never revives a record ended meanwhile.
		now = now.Truncate(time.Millisecond)
		if err := m.store.Touch(ctx, rec.ID, now, rec.ExpiresAt); err != nil {
			if errors.Is(err, user.ErrNotFound) {
				return nil, data{}, errRecordGone, nil
			}
			return nil, data{}, nil, fmt.Errorf("session: touch record: %w", err)
		}
	}
	return u, d, nil, nil
}

// end expires the session cookie of a request whose session is invalid.
func (s *Session) end(reason error) error {
	if !s.tokenMode {
		s.cookies.Delete(s.m.name, s.m.cookie)
	}
	s.state, s.user, s.remember, s.authAt, s.start, s.record = anonymous, nil, false, time.Time{}, time.Time{}, ""
	return fmt.Errorf("%w: %w", ErrNotAuthenticated, reason)
}

// The session token's data, after the token's own user id and issue time:
//
//	flags   1 byte: flagRemember, flagAuthTime, flagRecord, flagStart; no
//	        other bit may be set
//	version varint: the user's SessionVersion when the cookie was made
//	authAt  varint: Unix milliseconds of the last authentication; present
//	        exactly when flagAuthTime is set
//	start   varint: Unix milliseconds of the session's Login, which its
//	        lifetime counts from however often it is renewed; present
//	        exactly when flagStart is set (never without flagAuthTime)
//	record  16 bytes: the id of the session's record (Config.Store);
//	        present exactly when flagRecord is set
//
// Cookies made before authkit recorded the authentication time have no
// flagAuthTime and end after the version: they parse, with a zero authAt,
// so they keep authenticating and are never recent. Cookies made before it
// recorded the start count their lifetime from the token's issue time, and
// a renewal of one keeps that time as the start. Every cookie authkit
// makes now carries both. A future field takes the next flag bit, so
// each format parses exactly one way.
const (
	flagRemember = 1 << 0
	flagAuthTime = 1 << 1
	flagRecord   = 1 << 2
	flagStart    = 1 << 3
)

// recordIDLen is the length of a record id in bytes (32 hex characters).
const recordIDLen = 16

// data is a session token's data, parsed.
type data struct {
	remember bool
	version  int64
	authAt   time.Time // zero: not recorded (an older cookie)
	start    time.Time // when the session began; zero: not recorded (an older cookie)
	record   string    // the record id in hex; "" without one
	expires  time.Time // the record's ExpiresAt, once resolve read it; not in the cookie
}

// appendData appends the data of a session token to dst. record is ""
// or a record id made by newRecord.
func appendData(dst []byte, remember bool, version int64, authAt, start time.Time, record string) ([]byte, error) {
	flags := byte(flagAuthTime | flagStart)
	if remember {
		flags |= flagRemember
	}
	var id []byte
	if record != "" {
		var err error
		if id, err = hex.DecodeString(record); err != nil || len(id) != recordIDLen {
			return nil, fmt.Errorf("record id %q is not %d bytes of hex", record, recordIDLen)
		}
		flags |= flagRecord
	}
	dst = append(dst, flags)
	dst = binary.AppendVarint(dst, version)
	dst = binary.AppendVarint(dst, authAt.UnixMilli())
	dst = binary.AppendVarint(dst, start.UnixMilli())
	return append(dst, id...), nil
}

// parseData decodes a session token's data (see appendData), refusing any
// byte a Login never writes.
func parseData(d []byte) (data, error) {
	if len(d) < 2 || d[0]&^(flagRemember|flagAuthTime|flagRecord|flagStart) != 0 || d[0]&(flagRecord|flagAuthTime) == flagRecord ||
		d[0]&(flagStart|flagAuthTime) == flagStart {
		return data{}, errData
	}
	out := data{remember: d[0]&flagRemember != 0}
	rest := d[1:]
	version, n := binary.Varint(rest)
	if n <= 0 {
		return data{}, errData
	}
	out.version, rest = version, rest[n:]
	if d[0]&flagAuthTime != 0 {
		ms, n := binary.Varint(rest)
		if n <= 0 || ms <= 0 {
			return data{}, errData
		}
		out.authAt, rest = time.UnixMilli(ms).UTC(), rest[n:]
	}
	if d[0]&flagStart != 0 {
		ms, n := binary.Varint(rest)
		if n <= 0 || ms <= 0 {
			return data{}, errData
		}
		out.start, rest = time.UnixMilli(ms).UTC(), rest[n:]
	}
	if d[0]&flagRecord != 0 {
		if len(rest) < recordIDLen {
			return data{}, errData
		}
		out.record, rest = hex.EncodeToString(rest[:recordIDLen]), rest[recordIDLen:]
	}
	if len(rest) != 0 {
		return data{}, errData
	}
	return out, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// isToken reports whether s is a non-empty RFC 7230 token, the syntax of a
// cookie name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			return false
		}
		switch c {
		case '(', ')', '<', '>', '@', ',', ';', ':', '\\', '"', '/', '[', ']', '?', '=', '{', '}':
			return false
		}
	}
	return true
}

// isAttrValue reports whether s can be a Path or Domain attribute: printable
// ASCII without spaces or ';'.
func isAttrValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ';' {
			return false
		}
	}
	return true
}

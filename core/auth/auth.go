package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// Token lifetimes (docs/api.md, Tokens and mailed links).
const (
	PendingLifetime      = 5 * time.Minute // 2fa_pending cookie and token
	VerificationLifetime = 24 * time.Hour
	ResetLifetime        = time.Hour
)

// PendingCookie is the name of the cookie that holds a login waiting for
// its second factor (docs/api.md, Cookies).
const PendingCookie = "2fa_pending"

// Token purposes. Each signs with its own key, so a token made for one
// never verifies as another.
const (
	purposePending = "2fa_pending"
	purposeVerify  = "verify_email"
	purposeReset   = "reset_password"
)

// Config configures a [Service]. Zero optional fields mean the documented
// defaults; New never changes the Config it is given.
type Config struct {
	// Users is the user store. Required. It implements user.Accounts and
	// the other parts of the store contract (core/user) that the enabled
	// features need; New names a missing one. A store with
	// user.PasswordRehash also gets old password hashes upgraded at login.
	Users user.Accounts

	// Secrets sign every token and cookie: SESSION_SECRET, split on commas
	// by the caller. The first signs, all verify (rotation). Each at least
	// 32 bytes. Required.
	Secrets []string

	// Keys encrypt TOTP secrets at rest: ENCRYPTION_KEY. Required.
	Keys *secretbox.Keyring

	// AppURL is the base of links in mails, e.g. "https://app.example.com":
	// the verification link (FeatureEmailVerification), the password
	// reset link (FeaturePasswordReset) and the sign-in link
	// (EmailSignIn). Required unless both features are in Disable and
	// EmailSignIn is off; no other mail carries a link.
	AppURL string

	// VerifyEmailPath, ResetPasswordPath and EmailSignInPath are the page
	// paths the mailed links point to; the token is appended.
	// Defaults: "/verify-email/", "/reset-password/" and
	// "/email-sign-in/" (docs/api.md, Pages).
	VerifyEmailPath   string
	ResetPasswordPath string
	EmailSignInPath   string

	// AppName names the app in mails and is the TOTP issuer shown by
	// authenticator apps. Default: "authkit".
	AppName string

	// Mailer sends mail. Flows hand every message to an asynchronous
	// sender wrapped around it, so no response waits for (or reveals) a
	// mail. Default: a console mailer on standard output; New warns when
	// the mailer is a console one and Insecure is false (production).
	Mailer mail.Mailer

	// Templates render the mails. Default: mail.DefaultTemplates().
	Templates *mail.Templates

	// Hasher hashes passwords. Default: bcrypt at password's default cost.
	Hasher password.Hasher

	// RecoveryHasher hashes recovery codes. Default: recovery.NewHasher()
	// (bcrypt at its minimum cost: the codes carry 80 bits of entropy).
	RecoveryHasher password.Hasher

	// PasswordPolicy is the rule for new passwords. Default: 8 to 128
	// characters for every account, no context words refused (the package
	// docs, "Passwords", say why). password.NIST() follows NIST SP 800-63B
	// rev. 4: 15 characters for an account without 2FA, 8 with it, and no
	// password built on AppName, the account's address or its name.
	PasswordPolicy password.Policy

	// RequireTwoFactor makes 2FA compulsory for every account, or those
	// its For picks, after a grace period: see [TwoFactorPolicy].
	// Default: off.
	RequireTwoFactor TwoFactorPolicy

	// PasswordChecker refuses new passwords known to attackers (ASVS
	// 2.1.7) on registration, reset and change, with 400
	// "password_breached": password.NewPwned (the Have I Been Pwned range
	// API), password.NewList (common passwords the app supplies), or both
	// with password.AnyOf. Default: none.
	PasswordChecker password.Checker

	// PasswordCheckFailClosed refuses a new password, with 503, when
	// PasswordChecker cannot tell (the range API unreachable). Default:
	// false: the password is let through and a warning logged (without
	// the password or anything derived from it), so an outage of the API
	// stops no registration.
	PasswordCheckFailClosed bool

	// TOTP configures codes. Default: 6 digits, 30 seconds, window 1.
	TOTP totp.Config

	// Limits are the rate limits. Zero fields take the defaults (docs/api.md, Rate limits).
	Limits Limits

	// LimitStore makes the store of one limit (called once per limit with
	// its name, e.g. "login:ip"). Give each limit its own store, or share
	// one whose keys are prefixed, as the Redis store does. Default: a new
	// in-memory store per limit, closed by Service.Close.
	LimitStore func(name string) ratelimit.Store

	// LimitCapacity is how many keys each default in-memory limit store
	// holds (ratelimit.MemoryConfig.Capacity); every limit has its own
	// store. Ignored when LimitStore is set. At capacity, a new client
	// address or user id is limited, while a new email address is let
	// through uncounted (see the package documentation). Raise it for
	// more concurrent clients than the default serves; memory is about
	// 200 bytes per key. Default: 10,000 (the spec's capacity).
	LimitCapacity int

	// RateLimitFailOpen lets requests through when a limit's store fails.
	// Default: false: they get 503 (fail closed).
	RateLimitFailOpen bool

	// Lockout caps consecutive failed logins per account (NIST SP 800-63B
	// 5.2.2), independent of the rate-limit windows. Default: 100 failures
	// lock the account for 1 hour; a password reset unlocks it.
	// [LockoutOff] (Max < 0) switches it off.
	Lockout Lockout

	// Proxies decides the client address for rate-limit keys (TRUST_PROXY).
	// Default: trust no proxy; use the socket address.
	Proxies *clientip.Resolver

	// TrustedOrigins may make cross-origin state-changing requests (a front
	// end on another origin), e.g. "https://app.example.com".
	TrustedOrigins []string

	// Insecure drops the Secure attribute from cookies. Default: false.
	// Only for development over plain HTTP.
	Insecure bool

	// SessionCookie names the session cookie. Default: "__Host-authkit_session"
	// ([SecureSessionCookie]) when cookies are Secure (Insecure unset): the
	// prefix makes the browser keep it only when it was set Secure, by
	// this exact origin, for Path=/ and without Domain, so neither a
	// sibling subdomain nor a plain-HTTP page can plant or overwrite it
	// (SECURITY.md deviation 22); "authkit_session" with Insecure
	// (development over plain HTTP, where a browser refuses the prefix).
	// An app's own name is kept as it is.
	SessionCookie string

	// SessionLifetime and RememberLifetime: see session.Config.
	// Defaults: 24 hours and 30 days.
	SessionLifetime  time.Duration
	RememberLifetime time.Duration

	// Sessions keeps a server-side record of every session (session.Store:
	// store.NewMemorySessions, sqlxstore's, redisstore's): a user can list
	// their sessions (GET /api/auth/sessions) and end one (DELETE
	// /api/auth/sessions/{id}), logout ends the record so that every copy
	// of the cookie dies, and the changes that end other sessions delete
	// their records. Each authenticated request then reads the record once
	// (and writes it at most once a minute). Default: the user store's
	// own when it offers one ([session.Provider]: core/store's Memory and
	// sqlxstore's user store do), so logout means logout; with none (a user store
	// that offers no records) stateless cookies, and the session routes
	// are not registered. StatelessSessions asks for stateless cookies
	// whatever the user store offers.
	Sessions session.Store

	// StatelessSessions keeps no session records even when the user store
	// offers them: a session is its signed cookie alone. That saves the
	// record read of each authenticated request, and is weaker: logout
	// ends only the copy of the cookie in this browser (a stolen copy
	// works until its lifetime ends, unless the user logs out
	// everywhere), there is no idle timeout, no list of sessions, and a
	// re-authentication cannot retire the cookie it came with (SECURITY.md,
	// "Known limits"). Not with Sessions. Default: false.
	StatelessSessions bool

	// MaxSessionsPerUser bounds the session records of one account, and
	// its trusted browsers: a login (or a trust) that would pass it ends
	// the account's oldest, so that no account collects records without
	// end (ASVS 5.0 7.1.2). Kept in the store's own step when the store
	// implements session.Bounded (every store of authkit's does). Needs
	// Sessions or TrustedDevices. Default: session.DefaultMaxPerUser
	// (100). Negative: no bound.
	MaxSessionsPerUser int

	// SessionIdleTimeout ends a session no request used for that long
	// (to within a minute: last use is written at most once a minute).
	// Needs session records (Sessions, or the user store's). Default:
	// [DefaultSessionIdleTimeout] (30 minutes, ASVS 4.0.3 3.3.2 at Level
	// 2) with records, for sessions without "remember me" (see
	// RememberIdleTimeout); none without records. Negative: off. Within
	// its lifetime (SessionLifetime, 24 hours) a session in use never
	// ends; one left alone ends after this.
	SessionIdleTimeout time.Duration

	// RememberIdleTimeout is SessionIdleTimeout for a "remember me"
	// session: a session the user asked to keep for RememberLifetime (30
	// days) on a device of their own, which an idle timeout of minutes
	// would turn back into an ordinary one. Default: SessionIdleTimeout
	// when the app sets that, none when SessionIdleTimeout is the default
	// (a remembered session then lasts its RememberLifetime, however
	// seldom it is used). Negative: none. Needs session records.
	RememberIdleTimeout time.Duration

	// Tokens turns on token mode: the same flows for clients that keep
	// no cookies (mobile apps, command-line tools), answered with an
	// access and a refresh token instead of the session cookie (see
	// [TokenConfig] and docs/mobile.md). Needs session records. Default:
	// off.
	Tokens TokenConfig

	// PendingLogins keeps each login waiting for its second step (the
	// 2fa_pending cookie) until a second step takes it, once: a pending
	// login finishes one sign-in, so its cookie, kept or copied after the
	// second step succeeded, is refused (ErrTwoFactorExpired) with any
	// other factor within its 5 minutes; of concurrent second steps with
	// one cookie exactly one signs in. Several instances behind a load
	// balancer must share it (sqlxstore's DB.OneTime(), redisstore's
	// OneTime, as for the passkeys module's challenges), or a second step
	// that reaches another instance than its password step is refused.
	// Default: the user store's own when it offers one
	// ([onetime.Provider]: sqlxstore's user store does, so instances sharing the
	// database share it), else an in-process onetime.MemoryStore.
	PendingLogins onetime.Store

	// TrustedDevices keeps the browsers a user trusted at the second step
	// of a login ("trustDevice": true on 2FA verify or recover): a later
	// password login from such a browser needs no second step. A
	// session.Store of its own (not the one of Sessions: another instance,
	// or another key prefix or table), listed at GET
	// /api/2fa/trusted-devices and ended one by one there; every change
	// that raises the session version ends them all. Default: nil, no
	// trusted devices (the flag is ignored, the routes not registered).
	TrustedDevices session.Store

	// TrustedDeviceLifetime is how long a browser stays trusted.
	// Default: 30 days.
	TrustedDeviceLifetime time.Duration

	// ReauthWindow is how recent the last authentication of a session must
	// be for the changes that need one ("sudo mode", SECURITY.md deviation
	// 12): 2FA setup, confirm and recovery-code regeneration answer 403
	// "reauthentication_required" with an older one, until the user
	// confirms the password (POST /api/auth/confirm-password). Registration,
	// every login and a correct current password (2FA disable, email change,
	// password change, which take it) count as authentication. Negative: off,
	// a session is always recent enough. Default: 15 minutes.
	ReauthWindow time.Duration

	// EmailCode offers a 6-digit code mailed to the account's verified
	// address as a fallback second factor at the second step of a login
	// (see [EmailCodeConfig]). Default: off.
	EmailCode EmailCodeConfig

	// EmailSignIn offers sign-in without a password by a code or link
	// mailed to the address (see [EmailSignInConfig]). Default: off.
	EmailSignIn EmailSignInConfig

	// APIKeys offers personal API keys: a signed-in user creates keys that
	// authenticate the app's own API as Authorization: Bearer (see
	// [APIKeysConfig], apikeys.go). Default: off.
	APIKeys APIKeysConfig

	// MaxBodyBytes caps request bodies. Default: 16 KiB.
	MaxBodyBytes int64

	// Audit receives security events. Default: logged with Logger.
	Audit func(ctx context.Context, e Event)

	// Observer is told when each flow (a JSON route, or a typed method
	// called directly) and each store call starts and ends (the user store,
	// the limit stores, Sessions, TrustedDevices), and receives every
	// security event (as well as Audit), for metrics and traces: see
	// [Observer] and the otelauth module. Default: none, at no cost.
	Observer Observer

	// Disable switches features off (see [Feature]): their routes are not
	// registered and their methods fail with ErrFeatureDisabled.
	// Default: every feature on.
	Disable []Feature

	// NameOptional lets registration go without a name (an empty or absent
	// "name" is then stored as ""); a name that is given is still checked
	// (at most 200 characters). Default: false, the spec's rule: a name is
	// required.
	NameOptional bool

	// RegisterFields names extra fields of the registration body (strings,
	// decoded like the others) that are handed to Hooks.BeforeRegister and
	// Hooks.AfterRegister in Registration.Fields: an invitation code, a
	// company name, a tenant. authkit stores none of them.
	RegisterFields []string

	// Hooks let the app veto or extend flows. Default: none.
	Hooks Hooks

	// Catalog, when set, answers each request in the language its
	// Accept-Language header asks for among the catalog's (error texts,
	// messages, mails; see package i18n), with Vary: Accept-Language and
	// Content-Language. Codes never change. Default: nil, English only,
	// the spec's texts whatever the header says.
	Catalog *i18n.Catalog

	// Logger logs failures. Default: slog.Default().
	Logger *slog.Logger

	// Now and Rand are the clock and randomness. Defaults: time.Now and
	// crypto/rand.Reader. Tests inject them.
	Now  func() time.Time
	Rand io.Reader
}

// DefaultSessionIdleTimeout is Config.SessionIdleTimeout when the app sets
// none and sessions have records.
const DefaultSessionIdleTimeout = 30 * time.Minute

// SecureSessionCookie is the session cookie's name when the app names
// none and cookies are Secure: session.DefaultCookieName with the
// "__Host-" prefix (SECURITY.md deviation 22).
const SecureSessionCookie = "__Host-" + session.DefaultCookieName

// Lockout configures the per-account cap on consecutive failed logins.
type Lockout struct {
	Max      int           // Default: 100. Negative: off ([LockoutOff]).
	Duration time.Duration // Default: 1 hour.
}

// LockoutOff is a Lockout that never locks an account (Max < 0): for an
// app that leaves failed logins to the rate limits, or whose store has no
// user.Lockout. Config{Lockout: auth.LockoutOff}, as [Off] is for a Limit.
var LockoutOff = Lockout{Max: -1}

// Service runs the reference flows. It is safe for concurrent use. Make one
// with [New], mount it with a framework module (which serves
// [Modules.Routes]), and [Service.Close] it on shutdown. What only
// framework and extension modules call is [Service.Modules].
type Service struct {
	cfg       Config
	added     addedRoutes // the routes modules registered (routes.go)
	labels    sync.Map    // outside providers' labels by name (external.go)
	users     userStore   // Config.Users, by part (stores.go)
	keys      *secretbox.Keyring
	hasher    password.Hasher
	recovery  password.Hasher
	policy    password.Policy
	totp      *totp.TOTP
	sessions  *session.Manager
	pending   *token.Verifier
	verify    *token.Verifier
	reset     *token.Verifier
	device    *token.Verifier // the device cookie (notices.go)
	trusted   *token.Verifier // the trusted-device cookie (trusted.go)
	emailCode *token.Verifier // hashes mailed codes (emailcode.go); only its Bind is used
	signIn    *token.Verifier // the mailed sign-in links, and the hashes of sign-in codes (emailsignin.go)
	sender    *mail.Sender
	tmpl      mail.Templates
	proxies   *clientip.Resolver
	origins   *http.CrossOriginProtection
	log       *slog.Logger
	now       func() time.Time
	maxBody   int64

	lim limits // one limiter per rate limit (limits.go)

	apiKeys user.APIKeys // Config.Users's part when Config.APIKeys.Enabled; nil: off (apikeys.go)

	dummyHash string // for timing-equal failures on unknown emails

	pendingLogins onetime.Store // Config.PendingLogins, or its default

	registerFields []field // the registration body: email, password, name and Config.RegisterFields
}

// check refuses a Config New cannot work with, naming what is wrong.
func (cfg *Config) check() error {
	if cfg.Users == nil {
		return errors.New("auth: Config.Users is required")
	}
	if cfg.Keys == nil {
		return errors.New("auth: Config.Keys (ENCRYPTION_KEY) is required")
	}
	if err := checkFeatures(cfg.Disable); err != nil {
		return err
	}
	if cfg.AppURL == "" && (cfg.featureOn(FeatureEmailVerification) || cfg.featureOn(FeaturePasswordReset)) {
		return errors.New("auth: Config.AppURL is required: the mailed verification and password-reset links start with it " +
			"(an app that mails neither adds auth.FeatureEmailVerification and auth.FeaturePasswordReset to Config.Disable)")
	}
	if cfg.AppURL == "" && cfg.EmailSignIn.Enabled {
		return errors.New("auth: Config.AppURL is required: the mailed sign-in link (Config.EmailSignIn) starts with it")
	}
	if cfg.StatelessSessions && cfg.Sessions != nil {
		return errors.New("auth: Config.StatelessSessions and Config.Sessions exclude each other")
	}
	if cfg.Tokens.Enabled && cfg.StatelessSessions {
		return errors.New("auth: Config.Tokens needs session records: a token-mode session is one (not Config.StatelessSessions)")
	}
	if !cfg.Tokens.Enabled && (cfg.Tokens.AccessLifetime != 0 || cfg.Tokens.Families != nil) {
		return errors.New("auth: Config.Tokens is configured but not Enabled")
	}
	if err := checkRegisterFields(cfg.RegisterFields); err != nil {
		return err
	}
	if cfg.RequireTwoFactor.Enabled && !cfg.featureOn(FeatureTwoFactor) {
		return errors.New("auth: Config.RequireTwoFactor needs the two-factor feature (it is in Config.Disable): no one could comply")
	}
	if err := checkCatalog(cfg.Catalog); err != nil {
		return err
	}
	return cfg.APIKeys.check()
}

// withDefaults fills in the documented defaults. cfg is a copy: the
// caller's Config, and its slices, stay the caller's.
func (cfg Config) withDefaults() Config {
	cfg.AppURL = strings.TrimRight(cfg.AppURL, "/")
	cfg.Disable = slices.Clone(cfg.Disable) // the caller's slice stays the caller's
	cfg.RegisterFields = slices.Clone(cfg.RegisterFields)
	if cfg.VerifyEmailPath == "" {
		cfg.VerifyEmailPath = "/verify-email/"
	}
	if cfg.ResetPasswordPath == "" {
		cfg.ResetPasswordPath = "/reset-password/"
	}
	if cfg.EmailSignInPath == "" {
		cfg.EmailSignInPath = "/email-sign-in/"
	}
	if cfg.AppName == "" {
		cfg.AppName = "authkit"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 16 << 10
	}
	if cfg.MaxSessionsPerUser == 0 {
		cfg.MaxSessionsPerUser = session.DefaultMaxPerUser
	}
	if cfg.TrustedDeviceLifetime <= 0 {
		cfg.TrustedDeviceLifetime = DefaultTrustedDeviceLifetime
	}
	if cfg.EmailCode.Lifetime <= 0 {
		cfg.EmailCode.Lifetime = DefaultEmailCodeLifetime
	}
	if cfg.EmailSignIn.Lifetime <= 0 {
		cfg.EmailSignIn.Lifetime = DefaultEmailSignInLifetime
	}
	if cfg.ReauthWindow == 0 {
		cfg.ReauthWindow = DefaultReauthWindow
	}
	cfg.APIKeys = cfg.APIKeys.withDefaults()
	if cfg.Lockout.Max == 0 {
		cfg.Lockout.Max = 100
	}
	if cfg.Lockout.Duration <= 0 {
		cfg.Lockout.Duration = time.Hour
	}
	if cfg.Sessions == nil && !cfg.StatelessSessions {
		if p, ok := cfg.Users.(session.Provider); ok {
			cfg.Sessions = p.SessionStore()
		}
	}
	if cfg.SessionCookie == "" && !cfg.Insecure {
		cfg.SessionCookie = SecureSessionCookie
	}
	cfg.SessionIdleTimeout, cfg.RememberIdleTimeout = idleTimeouts(cfg.SessionIdleTimeout, cfg.RememberIdleTimeout, cfg.Sessions != nil)
	cfg.Limits = cfg.Limits.withDefaults()
	return cfg
}

// idleTimeouts are the idle timeouts the session manager gets (0: none),
// from Config.SessionIdleTimeout and RememberIdleTimeout as the app set
// them and whether sessions have records.
func idleTimeouts(idle, remember time.Duration, records bool) (time.Duration, time.Duration) {
	if remember == 0 {
		switch {
		case idle == 0 && records:
			remember = -1 // the default idle timeout leaves remembered sessions alone
		default:
			remember = idle
		}
	}
	if idle == 0 && records {
		idle = DefaultSessionIdleTimeout
	}
	return max(idle, 0), max(remember, 0)
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	users, err := bindUsers(&cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Tokens.Enabled && cfg.Sessions == nil {
		return nil, errors.New("auth: Config.Tokens needs session records: set Config.Sessions (the user store offers none)")
	}
	if cfg.Observer != nil {
		cfg.Sessions = observedRecords(cfg.Sessions, "Sessions", cfg.Observer)
		cfg.TrustedDevices = observedRecords(cfg.TrustedDevices, "TrustedDevices", cfg.Observer)
	}
	s := &Service{cfg: cfg, users: users, keys: cfg.Keys, log: cfg.Logger, now: cfg.Now, maxBody: cfg.MaxBodyBytes}
	if cfg.APIKeys.Enabled {
		s.apiKeys = users.apiKeys
	}
	s.pendingLogins = cfg.PendingLogins
	if s.pendingLogins == nil {
		if p, ok := cfg.Users.(onetime.Provider); ok {
			s.pendingLogins = p.OneTimeStore()
		}
	}
	if s.pendingLogins == nil {
		s.pendingLogins = onetime.NewMemoryStore(onetime.MemoryConfig{Now: cfg.Now})
	}
	s.pendingLogins = s.Modules().ObserveOneTime("PendingLogins", s.pendingLogins)
	s.registerFields = []field{str("email"), str("password"), str("name")}
	for _, f := range cfg.RegisterFields {
		s.registerFields = append(s.registerFields, str(f))
	}
	s.hasher = cfg.Hasher
	if s.hasher == nil {
		if s.hasher, err = password.New(password.Config{}); err != nil {
			return nil, fmt.Errorf("auth: default hasher: %w", err)
		}
	}
	// The dummy hash that unknown-email logins are checked against, made
	// now so that not even the first such login is slower: the hasher's
	// decoy (password.Decoy: no hashing, the cost of a real hash to check),
	// else a hash of a random password.
	if d, ok := s.hasher.(password.Decoy); ok {
		if s.dummyHash, err = d.DecoyHash(); err != nil {
			return nil, fmt.Errorf("auth: dummy hash: %w", err)
		}
	} else {
		var pw [16]byte
		if _, err := io.ReadFull(cfg.Rand, pw[:]); err != nil {
			return nil, fmt.Errorf("auth: random: %w", err)
		}
		if s.dummyHash, err = s.hasher.Hash(context.Background(), hex.EncodeToString(pw[:])); err != nil {
			return nil, fmt.Errorf("auth: dummy hash: %w", err)
		}
	}
	s.recovery = cfg.RecoveryHasher
	if s.recovery == nil {
		s.recovery = recovery.NewHasher()
	}
	s.policy = cfg.PasswordPolicy
	tc := cfg.TOTP
	if tc.Now == nil {
		tc.Now = cfg.Now
	}
	if tc.Rand == nil {
		tc.Rand = cfg.Rand
	}
	if s.totp, err = totp.New(tc); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	var tokens session.TokenConfig
	if cfg.Tokens.Enabled {
		tokens = session.TokenConfig{Families: cmp.Or[onetime.Store](cfg.Tokens.Families, s.pendingLogins), AccessLifetime: cfg.Tokens.AccessLifetime}
	}
	s.sessions, err = session.New(session.Config{
		Secrets:             cfg.Secrets,
		ResolveUser:         s.resolveUser,
		CookieName:          cmp.Or(cfg.SessionCookie, session.DefaultCookieName),
		Lifetime:            cfg.SessionLifetime,
		RememberLifetime:    cfg.RememberLifetime,
		Insecure:            cfg.Insecure,
		Store:               cfg.Sessions,
		IdleTimeout:         cfg.SessionIdleTimeout,
		RememberIdleTimeout: cmp.Or(cfg.RememberIdleTimeout, -1),
		MaxPerUser:          cfg.MaxSessionsPerUser,
		Tokens:              tokens,
		Now:                 cfg.Now,
		Rand:                cfg.Rand,
	})
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	for _, v := range []struct {
		dst     **token.Verifier
		purpose string
		expiry  time.Duration
	}{
		{&s.pending, purposePending, PendingLifetime},
		{&s.verify, purposeVerify, VerificationLifetime},
		{&s.reset, purposeReset, ResetLifetime},
		{&s.device, purposeDevice, DeviceLifetime},
		{&s.trusted, purposeTrusted, cfg.TrustedDeviceLifetime},
		{&s.emailCode, purposeEmailCode, cfg.EmailCode.Lifetime},
		{&s.signIn, purposeEmailSignIn, cfg.EmailSignIn.Lifetime},
	} {
		if *v.dst, err = token.NewVerifier(token.Config{Secrets: cfg.Secrets, Purpose: v.purpose, Expiry: v.expiry, Now: cfg.Now}); err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
	}
	mailer := cfg.Mailer
	if mailer == nil {
		mailer = mail.NewConsole(nil)
	}
	if _, console := mailer.(*mail.Console); console && !cfg.Insecure {
		// Secure cookies mean production; there the links and codes of
		// every mail would land in the log and reach no user.
		s.log.Warn("authkit: mail goes to a console mailer (standard output unless the app gave it a writer) in a Secure configuration: no user receives it; set Config.Mailer (mail.NewSMTP)")
	}
	s.sender = mail.NewSender(mailer, mail.SenderConfig{Logger: cfg.Logger})
	if cfg.Templates != nil {
		s.tmpl = *cfg.Templates
	} else {
		s.tmpl = mail.DefaultTemplates()
	}
	s.proxies = cfg.Proxies
	if s.proxies == nil {
		s.proxies = clientip.New()
	}
	s.origins = http.NewCrossOriginProtection()
	for _, o := range cfg.TrustedOrigins {
		if err := s.origins.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("auth: trusted origin: %w", err)
		}
	}
	if s.lim, err = newLimits(&cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// Close drains the mail queue (bounded by ctx) and stops the background
// work of the default stores. Call it on shutdown.
func (s *Service) Close(ctx context.Context) error {
	return errors.Join(s.sender.Close(ctx), s.lim.close())
}

// FlushMail waits until every mail queued so far has been handed to the
// Mailer (or given up on). Tests use it to assert what was, and was not,
// sent without sleeping.
func (s *Service) FlushMail(ctx context.Context) error { return s.sender.Flush(ctx) }

// SessionManager returns the Service's session manager: the session
// cookie over the Config.Sessions store, for a module that signs users in
// from its own handlers.
func (m *Modules) SessionManager() *session.Manager { return m.svc().sessions }

func (s *Service) resolveUser(ctx context.Context, id string) (*user.User, error) {
	u, err := s.users.ByID(ctx, id)
	if errors.Is(err, user.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

// clientKey is the client's address of r as a rate-limit key part.
func (s *Service) clientKey(r Request) string {
	ip, ok := s.resolveClient(r)
	return clientKeyOf(ip, ok)
}

// resolveClient is the client's address of r: the socket peer, or the
// X-Forwarded-For entry Config.Proxies chooses. A Visit calls it once
// (Visit.client).
func (s *Service) resolveClient(r Request) (netip.Addr, bool) {
	return s.proxies.ClientIP(r.RemoteAddr(), splitHeader(r.Header("X-Forwarded-For")))
}

// clientKeyOf is the rate-limit key part of a resolved address: "unknown"
// when there is none.
func clientKeyOf(ip netip.Addr, ok bool) string {
	if !ok {
		return "unknown"
	}
	return clientip.Key(ip)
}

func splitHeader(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// isoTime formats t as JavaScript's Date.toISOString does: UTC, with
// milliseconds.
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

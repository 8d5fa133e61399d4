// Package app is the configuration shared by the example servers: it reads
// the environment (examples/README.md, "Configuration"),
// builds the auth.Service and its stores, and describes them in the
// startup log line. Each example's main only mounts the service on its
// framework.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/pages"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/social"
)

// Env reads a variable; tests pass a map's lookup.
type Env func(key string) (string, bool)

// App is a configured service with what the startup log says about it.
type App struct {
	Addr       string
	Production bool
	Service    *auth.Service
	Users      user.Store
	Pages      *pages.Handler // the pages module at the root; it answers every path no route answers (its 404 page)
	// Passkeys is the passkeys module, whose routes (under
	// passkeys.Prefix, /api/passkeys) are among the Service's; nil when
	// PASSKEYS turns it off or the user store cannot hold passkeys.
	Passkeys *passkeys.Handler
	// Social is the social module of OAUTH_PROVIDERS, whose routes are
	// among the Service's; nil without providers.
	Social      *social.Handler
	Description string // stores and mailer, for the first log line
	Warnings    []string

	// MetricsAddr is METRICS_ADDR, where Main serves Metrics; empty
	// (the default) for no metrics.
	MetricsAddr string
	// Metrics answers GET /metrics with the Prometheus text of the
	// otelauth metrics (OpenTelemetry's Prometheus exporter); nil without
	// METRICS_ADDR.
	Metrics http.Handler

	closers    []func(context.Context) error
	logger     *slog.Logger
	pingLimits func(context.Context) error // nil: in-memory limits, never down
	redis      redis.UniversalClient       // the limits' Redis; nil without one
}

// Close stops the service (draining mail) and closes the stores.
func (a *App) Close(ctx context.Context) error {
	var err error
	for i := len(a.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, a.closers[i](ctx))
	}
	return err
}

// Get returns the variable key, trimmed, or def when it is unset or blank.
func (env Env) Get(key, def string) string {
	if v, ok := env(key); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// DefaultAddr is where the example servers listen without ADDR: the
// loopback interface only, since development runs with generated secrets
// and mail printed on standard output. ADDR=:8080 listens on every
// interface (a container, another machine).
const DefaultAddr = "localhost:8080"

// Load builds the App from the environment. In production it refuses to
// start without SESSION_SECRET, ENCRYPTION_KEY, SMTP_URL and APP_URL,
// naming every one that is missing. Settings that work but are unsafe
// (an APP_URL that is not https://, TRUST_PROXY=true) add to Warnings.
func Load(env Env, stdout io.Writer, logger *slog.Logger) (*App, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &App{Addr: env.Get("ADDR", DefaultAddr), logger: logger}
	appEnv := env.Get("APP_ENV", "development")
	switch appEnv {
	case "production":
		a.Production = true
	case "development":
	default:
		return nil, fmt.Errorf("APP_ENV must be development or production, not %q", appEnv)
	}
	if a.Production {
		var missing []string
		for _, k := range []string{"SESSION_SECRET", "ENCRYPTION_KEY", "SMTP_URL", "APP_URL"} {
			if env.Get(k, "") == "" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("APP_ENV=production requires %s", strings.Join(missing, ", "))
		}
	}
	dataDir := env.Get("AUTHKIT_DATA_DIR", ".authkit")

	secrets, keys, err := a.secrets(env, dataDir)
	if err != nil {
		return nil, err
	}
	keyring, err := secretbox.ParseKeyring(keys)
	if err != nil {
		return nil, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	proxies, err := clientip.Parse(env.Get("TRUST_PROXY", ""))
	if err != nil {
		return nil, fmt.Errorf("TRUST_PROXY: %w", err)
	}
	if proxies.String() == "all" {
		a.Warnings = append(a.Warnings, "TRUST_PROXY=true believes the leftmost X-Forwarded-For entry from any peer: "+
			"behind a proxy that appends to the header (nginx's $proxy_add_x_forwarded_for) every client chooses its own "+
			"rate-limit key; set TRUST_PROXY to the proxy's addresses (e.g. TRUST_PROXY=10.0.0.0/8) unless the proxy overwrites it")
	}
	redisSrc, err := parseRedis(env)
	if err != nil {
		return nil, err
	}
	appURL := env.Get("APP_URL", "http://localhost:8080")
	if w := appURLWarning(appURL); w != "" {
		a.Warnings = append(a.Warnings, w)
	}

	dbURL := env.Get("DATABASE_URL", "sqlite://"+filepath.Join(dataDir, "authkit.db"))
	// With Redis, the limits are not kept in the database: no table for them.
	users, records, usersDesc, err := a.openUsers(dbURL, dataDir, redisSrc != nil)
	if err != nil {
		return nil, err
	}
	a.Users = users
	limitStore, limitsDesc, err := a.openLimits(redisSrc, env.Get("REDIS_PREFIX", redisstore.DefaultPrefix))
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	if limitStore == nil && a.Production {
		a.Warnings = append(a.Warnings, "REDIS_URL is unset: rate limits are kept in this process's memory, "+
			"10,000 keys per limit; production with more than one process, or under attack, wants REDIS_URL "+
			"(or REDIS_CLUSTER_URL, REDIS_SENTINEL_URL: one shared limit store without that capacity)")
	}

	mailer, mailDesc, err := a.mailer(env.Get("SMTP_URL", ""), env.Get("MAIL_FROM", ""), stdout)
	if err != nil {
		return nil, err
	}

	obs, err := a.metrics(env.Get("METRICS_ADDR", ""))
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	var observer auth.Observer // a nil *otelauth.Observer in it would not be nil
	if obs != nil {
		mailer, observer = obs.Mailer(mailer), obs
	}

	checker, checkerDesc, err := pwnedChecker(env.Get("PWNED_PASSWORDS", ""))
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}

	emailCode, err := switchSetting("EMAIL_CODE", env.Get("EMAIL_CODE", ""))
	var emailSignIn, tokenMode bool
	if err == nil {
		emailSignIn, err = switchSetting("EMAIL_SIGN_IN", env.Get("EMAIL_SIGN_IN", ""))
	}
	if err == nil {
		tokenMode, err = switchSetting("TOKEN_MODE", env.Get("TOKEN_MODE", ""))
	}
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	hasher, err := bcryptHasher(env.Get("BCRYPT_COST", ""), a.Production)
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	var capacity int
	var idle time.Duration
	limits, err := parseLimits(env.Get("RATE_LIMITS", ""))
	if err == nil {
		capacity, err = parseCapacity(env.Get("RATE_LIMIT_CAPACITY", ""))
	}
	if err == nil {
		idle, err = parseIdle(env.Get("SESSION_IDLE_TIMEOUT", ""))
	}
	var languages *i18n.Catalog
	var languagesDesc string
	if err == nil {
		languages, languagesDesc, err = catalog(env.Get("LANGUAGES", ""))
	}
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}

	challenges, challengesDesc := a.challengeStore(records, env.Get("REDIS_PREFIX", ""))
	svc, err := auth.New(auth.Config{
		Users:      users,
		Secrets:    SplitList(secrets),
		Keys:       keyring,
		AppURL:     appURL,
		AppName:    env.Get("APP_NAME", "authkit"),
		Mailer:     mailer,
		Proxies:    proxies,
		LimitStore: limitStore,
		// RATE_LIMITS, RATE_LIMIT_CAPACITY (in-memory limits only) and
		// SESSION_IDLE_TIMEOUT.
		Limits:             limits,
		LimitCapacity:      capacity,
		SessionIdleTimeout: idle,
		// Secure cookies everywhere but development over plain HTTP.
		Insecure:        !a.Production,
		TrustedOrigins:  SplitList(env.Get("TRUSTED_ORIGINS", "")),
		PasswordChecker: checker,
		Hasher:          hasher, // nil: bcrypt at cost 12
		// Sessions a person can see and end, and browsers trusted at the
		// second step, kept with the users.
		Sessions:       records.sessions,
		TrustedDevices: records.trusted,
		// Logins waiting for their second step, shared as the passkey
		// challenges are (nil in memory: an in-process store).
		PendingLogins: challenges,
		// EMAIL_CODE: a mailed code as the fallback second step.
		EmailCode: auth.EmailCodeConfig{Enabled: emailCode},
		// EMAIL_SIGN_IN: sign-in by a mailed code or link.
		EmailSignIn: auth.EmailSignInConfig{Enabled: emailSignIn},
		// TOKEN_MODE: the same flows for mobile apps and API clients,
		// with access and refresh tokens (docs/mobile.md); their refresh
		// generations kept where the pending logins are.
		Tokens:   auth.TokenConfig{Enabled: tokenMode},
		Logger:   logger,
		Observer: observer,
		// LANGUAGES: the answers, mails and pages in the visitor's
		// language (Accept-Language); English and German by default.
		Catalog: languages,
	})
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	a.Service = svc
	a.closers = append(a.closers, svc.Close)
	passkeysDesc, err := a.passkeys(passkeySettings{
		setting: env.Get("PASSKEYS", ""), appURL: appURL, appName: env.Get("APP_NAME", "authkit"),
		challenges: challenges, challengesDesc: challengesDesc, capacity: env.Get("PASSKEY_CHALLENGE_CAPACITY", ""),
	}, logger)
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	socialDesc, err := a.socialSignIn(env, appURL, challenges, logger)
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	pagesCfg := pages.Config{Theme: pages.Theme{AppName: env.Get("APP_NAME", "authkit")},
		WarnPlainHTTP: a.Production, Logger: logger}
	if a.Passkeys != nil {
		pagesCfg.Passkeys = &pages.Passkeys{}
	}
	if a.Social != nil {
		for _, name := range a.Social.Providers() {
			pagesCfg.Social = append(pagesCfg.Social, pages.SocialProvider{Name: name, Label: socialLabel(env, name)})
		}
	}
	a.Pages, err = pages.New(svc, pagesCfg)
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	a.Description = fmt.Sprintf("users: %s, rate limits: %s, mail: %s, trusted proxies: %s, breached passwords: %s, passkeys: %s, email codes: %s, email sign-in: %s, token mode: %s, social sign-in: %s, languages: %s, env: %s",
		usersDesc, limitsDesc, mailDesc, proxies, checkerDesc, passkeysDesc, onOff(emailCode), onOff(emailSignIn), onOff(tokenMode), socialDesc, languagesDesc, appEnv)
	return a, nil
}

// passkeySettings are the variables of the passkeys module, and the
// challenge store chosen for it (challengeStore).
type passkeySettings struct {
	setting, appURL, appName string
	challenges               onetime.Store // nil: the module's in-process store
	challengesDesc           string
	capacity                 string // PASSKEY_CHALLENGE_CAPACITY
}

// challengeStore is where the passkey ceremonies wait between begin and
// finish, shared wherever the users or the limits are, so that a ceremony
// begun on one server process finishes on another behind a load balancer:
// the limits' Redis (keys under REDIS_PREFIX + "once:", or
// redisstore.DefaultOneTimePrefix), else the users' SQL database (its
// challenges table), else nil: the passkeys module's in-process store.
func (a *App) challengeStore(rec records, redisPrefix string) (onetime.Store, string) {
	switch {
	case a.redis != nil:
		prefix := redisstore.DefaultOneTimePrefix
		if redisPrefix != "" {
			prefix = redisPrefix + "once:"
		}
		return redisstore.NewOneTime(a.redis, redisstore.OneTimeConfig{Prefix: prefix}), "redis"
	case rec.challenges != nil:
		return rec.challenges, "database"
	}
	return nil, "memory"
}

// passkeys makes the passkeys module of PASSKEYS: unset, on when the user
// store can hold passkeys (user.Passkeys); "true", on, and a store that
// cannot is an error; "false", off. The relying party is APP_URL's host
// and its one origin APP_URL's scheme, host and port, so the pages must
// be opened at APP_URL (http://localhost:8080 in development: a browser
// offers WebAuthn on plain HTTP only on localhost). The ceremonies wait in
// ps.challenges; in memory, PASSKEY_CHALLENGE_CAPACITY sets the capacity
// of the module's store. It returns the description for the start-up log.
func (a *App) passkeys(ps passkeySettings, logger *slog.Logger) (string, error) {
	setting, appURL, appName := ps.setting, ps.appURL, ps.appName
	want := strings.TrimSpace(setting)
	switch want {
	case "", "true", "false":
	default:
		return "", fmt.Errorf("PASSKEYS must be true or false, not %q", setting)
	}
	capacity := 0
	if ps.capacity != "" {
		n, err := strconv.Atoi(ps.capacity)
		if err != nil || n <= 0 {
			return "", fmt.Errorf("PASSKEY_CHALLENGE_CAPACITY must be a positive number, not %q", ps.capacity)
		}
		capacity = n
	}
	if want == "false" {
		return "off", nil
	}
	if _, ok := a.Service.Modules().Users().(user.Passkeys); !ok {
		if want == "true" {
			return "", fmt.Errorf("PASSKEYS=true: the user store (DATABASE_URL) cannot hold passkeys")
		}
		return "off (the user store cannot hold them)", nil
	}
	u, err := url.Parse(appURL)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("PASSKEYS: APP_URL %q is not an http(s) URL, which the passkeys' origin comes from", appURL)
	}
	origin := u.Scheme + "://" + u.Host
	pk, err := passkeys.New(a.Service, passkeys.Config{RPID: u.Hostname(), RPDisplayName: appName,
		Origins: []string{origin}, Logger: logger, Challenges: ps.challenges, ChallengeCapacity: capacity})
	if err != nil {
		return "", fmt.Errorf("PASSKEYS: %w", err)
	}
	a.Passkeys = pk
	a.closers = append(a.closers, func(context.Context) error { return pk.Close() })
	return "on for " + origin + " (challenges: " + ps.challengesDesc + ")", nil
}

// bcryptHasher is the password hasher of BCRYPT_COST: unset, nil (the
// Service's default, bcrypt at password.DefaultBcryptCost, 12); else
// bcrypt at that cost, from password.MinProductionBcryptCost (10) to
// password.MaxBcryptCost in production. In development, whose secrets are
// generated on disk and whose mail goes to the console, it may go down to
// bcrypt's least, 4, so that local runs and the tests of the example
// servers, which sign up and in many times, are quick; a hash of another
// cost is redone at its next login (password.Standard.NeedsRehash).
func bcryptHasher(setting string, production bool) (password.Hasher, error) {
	if setting == "" {
		return nil, nil
	}
	least := password.MinProductionBcryptCost
	if !production {
		least = 4 // bcrypt.MinCost
	}
	cost, err := strconv.Atoi(setting)
	if err != nil || cost < least || cost > password.MaxBcryptCost {
		return nil, fmt.Errorf("BCRYPT_COST must be a whole number from %d to %d, not %q", least, password.MaxBcryptCost, setting)
	}
	h, err := password.New(password.Config{BcryptCost: cost, AllowLowCost: !production})
	if err != nil {
		return nil, fmt.Errorf("BCRYPT_COST: %w", err)
	}
	return h, nil
}

// switchSetting reads an off-by-default switch: unset or "false", off;
// "true", on. EMAIL_CODE: the 2FA step offers a code mailed to a verified
// address (off by default: the weakest factor, see auth.EmailCodeConfig).
// EMAIL_SIGN_IN: sign-in by a mailed code or link (auth.EmailSignInConfig).
// TOKEN_MODE: token mode for clients without cookies (auth.TokenConfig).
func switchSetting(name, setting string) (bool, error) {
	switch strings.TrimSpace(setting) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("%s must be true or false, not %q", name, setting)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// pwnedChecker is the breached-password check of PWNED_PASSWORDS: unset or
// "false", none; "true", the Have I Been Pwned range API; an http(s) URL,
// a range API at that base (a mirror). It returns the checker (nil for
// none) and its description for the start-up log.
func pwnedChecker(setting string) (password.Checker, string, error) {
	var base string
	switch s := strings.TrimSpace(setting); {
	case s == "" || s == "false":
		return nil, "off", nil
	case s == "true":
	case strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://"):
		base = s
	default:
		return nil, "", fmt.Errorf("PWNED_PASSWORDS must be true, false or a range API URL, not %q", setting)
	}
	p, err := password.NewPwned(password.PwnedConfig{BaseURL: base})
	if err != nil {
		return nil, "", fmt.Errorf("PWNED_PASSWORDS: %w", err)
	}
	return p, "range API " + cmp.Or(base, password.DefaultPwnedURL), nil
}

// appURLWarning says what is wrong with APP_URL for links mailed to
// people: anything but https://, except on a loopback host (development),
// where links work only on the machine itself anyway.
func appURLWarning(appURL string) string {
	u, err := url.Parse(appURL)
	if err == nil && u.Scheme == "https" && u.Host != "" {
		return ""
	}
	if err == nil && u.Scheme == "http" && isLoopback(u.Hostname()) {
		return ""
	}
	return "APP_URL=" + appURL + " is not an https:// URL: the links in mails (email verification, password reset) " +
		"carry their tokens over plain HTTP and lead to pages where the Secure sign-in cookie is not kept"
}

// isLoopback reports whether host names this machine: localhost (and its
// subdomains) or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// SplitList splits a comma-separated setting, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// openUsers opens the user store DATABASE_URL names: "memory", or a
// postgres://, mysql:// or sqlite:// URL (migrated on start). The default
// is an SQLite file in the data folder, so users survive restarts with no
// setup.
func (a *App) openUsers(dsn, dataDir string, noLimitsTable bool) (user.Store, records, string, error) {
	if dsn == "memory" {
		return store.NewMemory(store.MemoryConfig{}),
			records{store.NewMemorySessions(store.MemoryConfig{}), store.NewMemorySessions(store.MemoryConfig{}), nil},
			"memory (lost on restart)", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if strings.HasPrefix(dsn, "sqlite://") && !strings.HasPrefix(dsn, "sqlite://:memory:") {
		if err := os.MkdirAll(filepath.Dir(strings.TrimPrefix(dsn, "sqlite://")), 0o700); err != nil {
			return nil, records{}, "", fmt.Errorf("DATABASE_URL: %w", err)
		}
	}
	db, err := sqlxopen.Open(ctx, dsn, sqlxstore.Config{NoLimitsTable: noLimitsTable})
	if err != nil {
		return nil, records{}, "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, records{}, "", fmt.Errorf("DATABASE_URL: migrate: %w", err)
	}
	a.closers = append(a.closers, func(context.Context) error { return db.Close() })
	desc := string(db.Dialect())
	if strings.HasPrefix(dsn, "sqlite:") {
		desc += " " + strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
	} else if u, err := url.Parse(dsn); err == nil && u.Host != "" {
		desc += " " + u.Host // never the password
	}
	return db.Users(), records{db.Sessions(), db.TrustedDevices(), db.OneTime()}, desc, nil
}

// records are the session records, the trusted browsers and the values
// taken once (the passkey challenges; nil in memory), in the user store's
// database.
type records struct {
	sessions, trusted session.Store
	challenges        onetime.Store
}

func (a *App) mailer(smtpURL, from string, stdout io.Writer) (mail.Mailer, string, error) {
	if smtpURL == "" {
		a.Warnings = append(a.Warnings, "SMTP_URL is unset: mails are printed to standard output (development only)")
		return mail.NewConsole(stdout), "console", nil
	}
	if from == "" {
		from = "authkit <no-reply@localhost>"
	}
	m, err := mail.NewSMTP(smtpURL, mail.SMTPConfig{From: from})
	if err != nil {
		return nil, "", fmt.Errorf("SMTP_URL: %w", err)
	}
	return m, "smtp " + m.String(), nil
}

// secrets returns SESSION_SECRET and ENCRYPTION_KEY. In development, when
// unset, they are generated once and kept in a git-ignored file in the
// data folder, with a warning, so sessions survive restarts.
func (a *App) secrets(env Env, dataDir string) (secret, key string, err error) {
	secret, key = env.Get("SESSION_SECRET", ""), env.Get("ENCRYPTION_KEY", "")
	if secret != "" && key != "" {
		return secret, key, nil
	}
	path := filepath.Join(dataDir, "dev-secrets")
	kept := map[string]string{}
	if b, err := os.ReadFile(path); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
				kept[k] = v
			}
		}
	}
	changed := false
	if secret == "" {
		if kept["SESSION_SECRET"] == "" {
			var b [32]byte
			_, _ = rand.Read(b[:])
			kept["SESSION_SECRET"] = base64.RawURLEncoding.EncodeToString(b[:])
			changed = true
		}
		secret = kept["SESSION_SECRET"]
	}
	if key == "" {
		if kept["ENCRYPTION_KEY"] == "" {
			if kept["ENCRYPTION_KEY"], err = secretbox.GenerateKey(); err != nil {
				return "", "", err
			}
			changed = true
		}
		key = kept["ENCRYPTION_KEY"]
	}
	if changed {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return "", "", fmt.Errorf("development secrets: %w", err)
		}
		body := "# Generated by the authkit example server for development. Never use in production.\n" +
			"SESSION_SECRET=" + kept["SESSION_SECRET"] + "\nENCRYPTION_KEY=" + kept["ENCRYPTION_KEY"] + "\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return "", "", fmt.Errorf("development secrets: %w", err)
		}
	}
	a.Warnings = append(a.Warnings, "SESSION_SECRET/ENCRYPTION_KEY unset: using development secrets from "+path+" (never in production)")
	return secret, key, nil
}

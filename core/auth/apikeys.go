package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Personal API keys (Config.APIKeys): a signed-in user creates keys for
// scripts and API clients, each with a name, scopes and an expiry, and
// sends one as "Authorization: Bearer authkit_..." to the app's own API.
//
// A key is authkit_<id>_<secret><checksum>: the id is 16 random base62
// characters, public and the store's lookup key; the secret 32 random
// bytes in base62 (43 characters); the checksum the CRC32 of everything
// before it in base62 (6 characters), so that a secret scanner, or the
// server before any store read, can tell a key from a typo. The store
// keeps the SHA-256 of the secret, compared in constant time; the key
// itself is shown once, when it is created.
//
// A key authenticates the app's API, through Authenticate and so
// RequireUser and RequireScope in the framework modules; never authkit's
// own routes, which read the session cookie only: a leaked key cannot
// change the password, the address or 2FA, create more keys or delete the
// account. Each request with a key counts against Limits.APIKey under the
// key's id, after the key checked out (so that nobody can spend another's
// key's allowance with keys that do not). The last use is written at most
// once a minute.
//
// A password reset, logout everywhere and the deletion of the account end
// every key of the account.

// APIKeyPrefix starts every personal API key: secret scanners look for it.
const APIKeyPrefix = "authkit_"

// The shape of a key: authkit_ + id (16) + "_" + secret (43) + checksum (6).
const (
	apiKeyIDLen     = 16
	apiKeySecretLen = 43 // 32 bytes in base62
	apiKeyCheckLen  = 6  // a CRC32 in base62
	apiKeyLen       = len(APIKeyPrefix) + apiKeyIDLen + 1 + apiKeySecretLen + apiKeyCheckLen
)

// Defaults of APIKeysConfig.
const (
	DefaultAPIKeysPerUser    = 20
	DefaultAPIKeyLifetime    = 30 * 24 * time.Hour
	DefaultAPIKeyMaxLifetime = 365 * 24 * time.Hour
)

// MaxAPIKeyName is the longest name of a key, in characters.
const MaxAPIKeyName = 64

const (
	apiKeyTouchInterval        = time.Minute // LastUsedAt is written at most this often
	maxScopeLen                = 64
	maxScopesPerKey            = 32
	apiKeyCreateCollisionTries = 3
)

// APIKeysConfig configures personal API keys (Config.APIKeys).
type APIKeysConfig struct {
	// Enabled offers API keys: the routes under /api/auth/api-keys, the
	// methods CreateAPIKey, ListAPIKeys, RevokeAPIKey and
	// RevokeAllAPIKeys, and keys sent as Authorization: Bearer to
	// Authenticate. Config.Users must implement user.APIKeys. Default:
	// false (the routes are not registered, the methods answer
	// ErrFeatureDisabled, a bearer key is refused as invalid_api_key).
	Enabled bool

	// Scopes are the scopes a key may be given, in the app's own terms
	// ("read", "billing:write"); a key asked for with another fails with
	// ErrUnknownScope. Each is 1 to 64 printable ASCII characters without
	// spaces. Default: none, so keys carry no scope and RequireScope
	// refuses them all.
	Scopes []string

	// MaxPerUser bounds the live keys of one account. Default: 20.
	MaxPerUser int

	// DefaultLifetime is how long a key asked for without an expiry lives.
	// Default: 30 days.
	DefaultLifetime time.Duration

	// MaxLifetime is the longest lifetime a key may be given: every key
	// expires. Default: 365 days.
	MaxLifetime time.Duration
}

func (c APIKeysConfig) withDefaults() APIKeysConfig {
	c.Scopes = slices.Clone(c.Scopes)
	if c.MaxPerUser <= 0 {
		c.MaxPerUser = DefaultAPIKeysPerUser
	}
	if c.MaxLifetime <= 0 {
		c.MaxLifetime = DefaultAPIKeyMaxLifetime
	}
	if c.DefaultLifetime <= 0 {
		c.DefaultLifetime = min(DefaultAPIKeyLifetime, c.MaxLifetime)
	}
	return c
}

// check refuses scopes no client could send and a default lifetime
// beyond the maximum.
func (c APIKeysConfig) check() error {
	if !c.Enabled {
		return nil
	}
	for _, sc := range c.Scopes {
		if !validScope(sc) {
			return fmt.Errorf("auth: Config.APIKeys.Scopes: %q is not 1 to %d printable ASCII characters without spaces", sc, maxScopeLen)
		}
	}
	if c.DefaultLifetime > 0 && c.MaxLifetime > 0 && c.DefaultLifetime > c.MaxLifetime {
		return errors.New("auth: Config.APIKeys.DefaultLifetime exceeds MaxLifetime")
	}
	return nil
}

func validScope(sc string) bool {
	if sc == "" || len(sc) > maxScopeLen {
		return false
	}
	for i := 0; i < len(sc); i++ {
		if sc[i] <= ' ' || sc[i] > '~' {
			return false
		}
	}
	return true
}

// The errors of API keys.
var (
	ErrUnknownScope          = def(400, "unknown_scope", "Unknown scope")
	ErrInvalidExpiry         = def(400, "invalid_expiry", "Invalid expiry")
	ErrTooManyAPIKeys        = def(400, "too_many_api_keys", "Too many API keys. Revoke one first.")
	ErrAPIKeyNotFound        = def(404, "api_key_not_found", "API key not found")
	ErrInvalidAPIKey         = def(401, "invalid_api_key", "Invalid API key")
	ErrInsufficientScope     = def(403, "insufficient_scope", "Insufficient scope")
	ErrTooManyAPIKeyRequests = def(429, "too_many_api_key_requests", "Too many requests with this API key. Try again later.")
)

// The security events of API keys.
const (
	// EventAPIKeyCreated: a user created an API key (Detail: its id).
	EventAPIKeyCreated EventType = "api_key_created"
	// EventAPIKeyRevoked: a key was revoked (Detail: its id, or "all" with
	// the count for every key of the account: "all:3").
	EventAPIKeyRevoked EventType = "api_key_revoked"
)

// APIKeyInput is what CreateAPIKey takes.
type APIKeyInput struct {
	Name   string   // the user's name for the key; required, at most MaxAPIKeyName characters
	Scopes []string // a subset of Config.APIKeys.Scopes; duplicates are dropped
	// ExpiresIn is the key's lifetime: zero for
	// Config.APIKeys.DefaultLifetime, at most MaxLifetime
	// ([ErrInvalidExpiry] otherwise).
	ExpiresIn time.Duration
}

// APIKeyInfo is one API key as its owner sees it: never the secret or its
// hash.
type APIKeyInfo struct {
	ID         string
	Name       string
	Prefix     string // what the key starts with, to recognise it: authkit_<id>
	Scopes     []string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastUsedAt time.Time // zero until used; written at most once a minute
}

// NewAPIKey is what CreateAPIKey returns: the key, shown this once, and
// its metadata.
type NewAPIKey struct {
	Key    string
	APIKey APIKeyInfo
}

func apiKeyInfo(k *user.APIKey) APIKeyInfo {
	return APIKeyInfo{ID: k.ID, Name: k.Name, Prefix: APIKeyPrefix + k.ID, Scopes: append([]string{}, k.Scopes...),
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt}
}

// HasAPIKeys reports whether API keys are on (Config.APIKeys.Enabled): a
// page shows its API-key section only then.
func (s *Service) HasAPIKeys() bool { return s.apiKeys != nil }

// APIKeyScopes returns the scopes a key may be given
// (Config.APIKeys.Scopes), for a page's form.
func (s *Service) APIKeyScopes() []string { return slices.Clone(s.cfg.APIKeys.Scopes) }

// APIKeyLifetimes returns the lifetime of a key asked for without one and
// the longest a key may have (Config.APIKeys), for a page's form.
func (s *Service) APIKeyLifetimes() (def, longest time.Duration) {
	return s.cfg.APIKeys.DefaultLifetime, s.cfg.APIKeys.MaxLifetime
}

func (s *Service) apiKeyStore() (user.APIKeys, error) {
	if s.apiKeys == nil {
		return nil, ErrFeatureDisabled
	}
	return s.apiKeys, nil
}

// CreateAPIKey is POST /api/auth/api-keys: it creates a personal API key
// for the signed-in user and returns it, the only time the key is seen.
// It needs a recent authentication ([ErrReauthenticationRequired]): a
// stolen session must not mint a credential that outlives it. The name is
// checked as a passkey's ([ErrNameRequired], [ErrNameTooLong],
// [ErrInvalidCharacters]); every scope must be one of Config.APIKeys.Scopes
// ([ErrUnknownScope]); the lifetime at most MaxLifetime
// ([ErrInvalidExpiry]). An account holding MaxPerUser live keys fails with
// [ErrTooManyAPIKeys], as one atomic step in the store, so racing creates
// cannot pass the bound. The owner is mailed a notice
// (mail.KindAPIKeyCreated).
func (s *Service) CreateAPIKey(ctx context.Context, v *Visit, in APIKeyInput) (_ NewAPIKey, err error) {
	ctx, flow := s.enter(ctx, v, "api-keys/create")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.apiKeyStore, s.RecentUser)
	if err != nil {
		return NewAPIKey{}, err
	}
	name, err := checkAPIKeyName(in.Name)
	if err != nil {
		return NewAPIKey{}, err
	}
	scopes, err := s.checkScopes(in.Scopes)
	if err != nil {
		return NewAPIKey{}, err
	}
	life := in.ExpiresIn
	if life == 0 {
		life = s.cfg.APIKeys.DefaultLifetime
	}
	if life < time.Minute || life > s.cfg.APIKeys.MaxLifetime {
		return NewAPIKey{}, ErrInvalidExpiry
	}
	now := s.now().Truncate(time.Millisecond)
	var key string
	var k *user.APIKey
	for try := 0; ; try++ {
		var id, secret string
		if id, err = randomBase62(s.cfg.Rand, apiKeyIDLen); err == nil {
			secret, err = randomBase62(s.cfg.Rand, apiKeySecretLen)
		}
		if err != nil {
			return NewAPIKey{}, fmt.Errorf("create api key: %w", err)
		}
		key = formatAPIKey(id, secret)
		sum := sha256.Sum256([]byte(secret))
		k = &user.APIKey{ID: id, UserID: u.ID, Name: name, Hash: sum[:], Scopes: scopes, CreatedAt: now, ExpiresAt: now.Add(life)}
		err = st.CreateAPIKey(ctx, k, s.cfg.APIKeys.MaxPerUser)
		if errors.Is(err, user.ErrConflict) && try < apiKeyCreateCollisionTries {
			continue // an id in use: 95 bits make it all but impossible
		}
		break
	}
	switch {
	case errors.Is(err, user.ErrTooManyAPIKeys):
		return NewAPIKey{}, ErrTooManyAPIKeys
	case err != nil:
		return NewAPIKey{}, fmt.Errorf("create api key: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventAPIKeyCreated, UserID: u.ID, Detail: k.ID})
	s.send(ctx, v, mail.KindAPIKeyCreated, u.Email, mail.Data{Name: u.Name, KeyName: name, Expiry: life, Time: now, IP: v.clientAddr()})
	return NewAPIKey{Key: key, APIKey: apiKeyInfo(k)}, nil
}

// ListAPIKeys is GET /api/auth/api-keys: the signed-in user's keys that
// have not expired, oldest first.
func (s *Service) ListAPIKeys(ctx context.Context, v *Visit) (_ []APIKeyInfo, err error) {
	ctx, flow := s.enter(ctx, v, "api-keys")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.apiKeyStore, s.CurrentUser)
	if err != nil {
		return nil, err
	}
	keys, err := st.ListAPIKeys(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	now := s.now()
	out := make([]APIKeyInfo, 0, len(keys))
	for _, k := range keys {
		if now.Before(k.ExpiresAt) {
			out = append(out, apiKeyInfo(k))
		}
	}
	return out, nil
}

// RevokeAPIKey is DELETE /api/auth/api-keys/{id}: it deletes one key of
// the signed-in user. An id that is not one of the user's keys, another
// user's included, fails with [ErrAPIKeyNotFound]; of racing revokes of
// one key one succeeds.
func (s *Service) RevokeAPIKey(ctx context.Context, v *Visit, id string) (err error) {
	ctx, flow := s.enter(ctx, v, "api-keys/delete")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.apiKeyStore, s.CurrentUser)
	if err != nil {
		return err
	}
	if !isAPIKeyID(id) {
		return ErrAPIKeyNotFound // no id authkit makes: no store sees it
	}
	if err := st.RevokeAPIKey(ctx, u.ID, id); err != nil {
		if errors.Is(err, user.ErrNotFound) {
			return ErrAPIKeyNotFound
		}
		return fmt.Errorf("revoke api key: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventAPIKeyRevoked, UserID: u.ID, Detail: id})
	return nil
}

// RevokeAllAPIKeys deletes every key of the signed-in user and returns
// how many there were (flow "api-keys/delete-all": no route of its own).
func (s *Service) RevokeAllAPIKeys(ctx context.Context, v *Visit) (_ int, err error) {
	ctx, flow := s.enter(ctx, v, "api-keys/delete-all")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.apiKeyStore, s.CurrentUser)
	if err != nil {
		return 0, err
	}
	n, err := st.RevokeAPIKeys(ctx, u.ID)
	if err != nil {
		return 0, fmt.Errorf("revoke api keys: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventAPIKeyRevoked, UserID: u.ID, Detail: fmt.Sprintf("all:%d", n)})
	return n, nil
}

// revokeAPIKeys ends every key of u after a change that says the account
// may be in other hands (a password reset, logout everywhere). A failure
// is logged: the change it follows is committed.
func (s *Service) revokeAPIKeys(ctx context.Context, v *Visit, u *user.User) {
	st := s.users.apiKeys // keys made before Config.APIKeys was switched off end too
	if st == nil {
		return
	}
	n, err := st.RevokeAPIKeys(ctx, u.ID)
	if err != nil {
		s.log.ErrorContext(ctx, "authkit: api keys not revoked", "user", u.ID, "err", err)
		return
	}
	if n > 0 {
		s.audit(ctx, v, Event{Type: EventAPIKeyRevoked, UserID: u.ID, Detail: fmt.Sprintf("all:%d", n)})
	}
}

// checkAPIKeyName applies CheckPasskeyName's rule with MaxAPIKeyName.
func checkAPIKeyName(name string) (string, error) {
	return checkName(name, MaxAPIKeyName)
}

// checkScopes returns the scopes asked for without duplicates, in the
// order of Config.APIKeys.Scopes, or ErrUnknownScope.
func (s *Service) checkScopes(asked []string) ([]string, error) {
	if len(asked) > maxScopesPerKey {
		return nil, ErrUnknownScope
	}
	for _, sc := range asked {
		if !slices.Contains(s.cfg.APIKeys.Scopes, sc) {
			return nil, ErrUnknownScope
		}
	}
	out := []string{}
	for _, sc := range s.cfg.APIKeys.Scopes {
		if slices.Contains(asked, sc) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Keys on the wire.

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 returns n characters drawn uniformly from base62 with
// bytes of r (rejection sampling: bytes of 248 and above are dropped).
func randomBase62(r io.Reader, n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+4)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("random: %w", err)
		}
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out), nil
}

// checksum is the CRC32 (IEEE) of the key's text before it, in base62,
// zero-padded to apiKeyCheckLen (62^6 > 2^32).
func checksum(body string) string {
	c := crc32.ChecksumIEEE([]byte(body))
	b := make([]byte, apiKeyCheckLen)
	for i := apiKeyCheckLen - 1; i >= 0; i-- {
		b[i] = base62[c%62]
		c /= 62
	}
	return string(b)
}

func formatAPIKey(id, secret string) string {
	body := APIKeyPrefix + id + "_" + secret
	return body + checksum(body)
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}

// isAPIKeyID reports whether id has the shape of a key id.
func isAPIKeyID(id string) bool { return len(id) == apiKeyIDLen && isBase62(id) }

// ParseAPIKey splits a personal API key into its id and secret, checking
// its shape and checksum without a store: false for anything that is not
// a key authkit made (a typo, a truncated copy). It says nothing about
// whether the key is live.
func ParseAPIKey(key string) (id, secret string, ok bool) {
	if len(key) != apiKeyLen || !strings.HasPrefix(key, APIKeyPrefix) {
		return "", "", false
	}
	rest := key[len(APIKeyPrefix):]
	id, sep, tail := rest[:apiKeyIDLen], rest[apiKeyIDLen], rest[apiKeyIDLen+1:]
	if sep != '_' || !isBase62(id) || !isBase62(tail) {
		return "", "", false
	}
	secret, sum := tail[:apiKeySecretLen], tail[apiKeySecretLen:]
	if subtle.ConstantTimeCompare([]byte(sum), []byte(checksum(key[:len(key)-apiKeyCheckLen]))) != 1 {
		return "", "", false
	}
	return id, secret, true
}

// bearerAPIKey returns the API key of r's Authorization header: a Bearer
// credential that starts with APIKeyPrefix.
func bearerAPIKey(r Request) (string, bool) {
	tok := bearerToken(r)
	return tok, strings.HasPrefix(tok, APIKeyPrefix)
}

// authenticateAPIKey is Authenticate for a request that sends an API
// key: the key checked (shape and checksum, then the store's record: the
// hash in constant time, the expiry), its owner read, the owner checked as
// a session's would be (a verified address when verified, the 2FA
// requirement), the key's limit counted and its use recorded. Any key
// that does not check out answers 401 invalid_api_key, whichever check
// failed.
func (s *Service) authenticateAPIKey(r Request, raw string, verified bool) (*user.User, Credential, *Response) {
	v, ctx := s.Visit(r), r.Context()
	fail := func(err error) (*user.User, Credential, *Response) {
		resp := s.failure(ctx, v, "api key", err)
		return nil, Credential{}, &resp
	}
	if s.apiKeys == nil {
		return fail(ErrInvalidAPIKey)
	}
	id, secret, ok := ParseAPIKey(raw)
	if !ok {
		return fail(ErrInvalidAPIKey)
	}
	k, err := s.apiKeys.APIKeyByID(ctx, id)
	if errors.Is(err, user.ErrNotFound) {
		return fail(ErrInvalidAPIKey)
	} else if err != nil {
		return fail(fmt.Errorf("api key: %w", err))
	}
	sum := sha256.Sum256([]byte(secret))
	now := s.now()
	if subtle.ConstantTimeCompare(sum[:], k.Hash) != 1 || !now.Before(k.ExpiresAt) {
		return fail(ErrInvalidAPIKey)
	}
	u, err := s.users.ByID(ctx, k.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return fail(ErrInvalidAPIKey)
	} else if err != nil {
		return fail(fmt.Errorf("api key: user: %w", err))
	}
	if _, err := s.check(ctx, v, s.lim.apiKey, k.ID); err != nil {
		return fail(err)
	}
	switch {
	case s.TwoFactorRequirement(u).Overdue:
		return fail(ErrTwoFactorRequired)
	case verified && !u.EmailVerified():
		return fail(ErrEmailNotVerified)
	}
	if now.Sub(k.LastUsedAt) >= apiKeyTouchInterval {
		if err := s.apiKeys.TouchAPIKey(ctx, k.ID, now); err != nil && !errors.Is(err, user.ErrNotFound) {
			s.log.WarnContext(ctx, "authkit: api key last use not recorded", "key", k.ID, "err", err)
		}
	}
	return u, Credential{Kind: CredentialAPIKey, ID: k.ID, Scopes: k.Scopes}, nil
}

// AuthenticateCredential is Authenticate (verified: AuthenticateVerified)
// that also says how the request proved who it is from: the session
// cookie (every scope) or a personal API key (its scopes). RequireUser in
// every framework module calls it and puts both on the context
// (ContextWithUser, ContextWithCredential).
func (s *Service) AuthenticateCredential(r Request, verified bool) (*user.User, Credential, *Response) {
	if raw, ok := bearerAPIKey(r); ok {
		return s.authenticateAPIKey(r, raw, verified)
	}
	u, resp := s.authenticate(r, verified)
	if resp != nil {
		return nil, Credential{}, resp
	}
	if s.cfg.Tokens.Enabled {
		if bearer, _ := tokenRequest(r); strings.HasPrefix(bearer, session.AccessPrefix) {
			return u, Credential{Kind: CredentialAccessToken, All: true}, nil
		}
	}
	return u, Credential{Kind: CredentialSession, All: true}, nil
}

// AuthorizeScope is the decision of RequireScope in every framework
// module: the request's user and credential (those RequireUser put on
// r's context, else authenticated as AuthenticateCredential does), or the
// answer to send instead: what Authenticate answers, or 403
// insufficient_scope for a credential without scope (an API key created
// without it; a session has every scope).
func (s *Service) AuthorizeScope(r Request, scope string) (*user.User, Credential, *Response) {
	ctx := r.Context()
	u, okU := UserFromContext(ctx)
	c, okC := CredentialFromContext(ctx)
	if !okU || !okC {
		var resp *Response
		if u, c, resp = s.AuthenticateCredential(r, false); resp != nil {
			return nil, Credential{}, resp
		}
	}
	if !c.HasScope(scope) {
		resp := s.failure(ctx, s.Visit(r), "scope", ErrInsufficientScope)
		return nil, Credential{}, &resp
	}
	return u, c, nil
}

// apiKeyJSON is one key on the wire.
type apiKeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"createdAt"`
	ExpiresAt  string   `json:"expiresAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
}

func toAPIKeyJSON(k APIKeyInfo) apiKeyJSON {
	j := apiKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes, CreatedAt: isoTime(k.CreatedAt), ExpiresAt: isoTime(k.ExpiresAt)}
	if !k.LastUsedAt.IsZero() {
		t := isoTime(k.LastUsedAt)
		j.LastUsedAt = &t
	}
	return j
}

// maxExpiresInDays bounds expiresInDays before it becomes a duration.
const maxExpiresInDays = 100 * 365

func createAPIKeyRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("name"), strList("scopes"), integer("expiresInDays"))
	if err != nil {
		return s.failure(ctx, v, "create api key", err)
	}
	var life time.Duration
	if in.has("expiresInDays") {
		days := in.num("expiresInDays")
		if days <= 0 || days > maxExpiresInDays {
			return s.failure(ctx, v, "create api key", ErrInvalidExpiry)
		}
		life = time.Duration(days) * 24 * time.Hour
	}
	res, err := s.CreateAPIKey(ctx, v, APIKeyInput{Name: in.str("name"), Scopes: in.list("scopes"), ExpiresIn: life})
	if err != nil {
		return s.failure(ctx, v, "create api key", err)
	}
	return s.respond(v, http.StatusCreated, struct {
		APIKey apiKeyJSON `json:"apiKey"`
		Key    string     `json:"key"`
	}{toAPIKeyJSON(res.APIKey), res.Key})
}

func listAPIKeysRoute(ctx context.Context, s *Service, v *Visit) Response {
	return listRoute(ctx, s, v, "api keys", "apiKeys", s.ListAPIKeys, toAPIKeyJSON)
}

func revokeAPIKeyRoute(ctx context.Context, s *Service, v *Visit) Response {
	err := s.RevokeAPIKey(ctx, v, v.req.PathValue("id"))
	return s.answer(ctx, v, "revoke api key", s.say(v, "api_key_revoked", msgAPIKeyRevoked), err)
}

const msgAPIKeyRevoked = "API key revoked"

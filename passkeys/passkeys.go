package passkeys

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Prefix is the path every route of the handler lives under.
const Prefix = "/api/passkeys"

// ChallengeCookie holds the key of the ceremony a browser has begun (a
// random value; the state is in Config.Challenges).
const ChallengeCookie = "authkit_passkey"

// DefaultChallengeLifetime is how long a ceremony may take from begin to
// finish, unless Config.ChallengeLifetime says otherwise.
const DefaultChallengeLifetime = 5 * time.Minute

// maxBody caps the finish bodies: a credential with its attestation is a
// few kilobytes.
const maxBody = 64 << 10

// Config configures the handler. RPID and Origins are required.
type Config struct {
	// RPID is the relying party id: the site's registrable domain or a
	// host under it ("example.com"), without scheme or port. Credentials
	// are bound to it; changing it later orphans every passkey.
	RPID string
	// RPDisplayName is the name the browser shows. Default: RPID.
	RPDisplayName string
	// Origins are the exact origins ("https://example.com",
	// "http://localhost:8080") a ceremony may come from; each must be on
	// RPID. The browser reports the origin in the signed client data and
	// it is checked against this list.
	Origins []string

	// AllowPasswordless lets a passkey sign in on its own (discoverable
	// credentials, conditional UI). Default (nil): true. With false,
	// passkeys are a second factor only and the login routes answer 404
	// feature_disabled.
	AllowPasswordless *bool

	// RefuseCounterRegression refuses an assertion whose signature
	// counter is not above the stored one (a possibly cloned
	// authenticator). Either way the event is audited
	// (auth.EventPasskeyCountRegressed). Default: false (audit only):
	// many authenticators are honest and buggy.
	RefuseCounterRegression bool

	// Challenges keeps ceremonies between begin and finish. Default: an
	// in-process MemoryChallenges (one instance).
	Challenges ChallengeStore
	// ChallengeLifetime is how long a begun ceremony lasts. Default:
	// DefaultChallengeLifetime.
	ChallengeLifetime time.Duration
	// BeginLimit limits the begin routes per client address, so that the
	// challenge store cannot be filled. Default: 30 per minute.
	BeginLimit auth.Limit

	// Logger receives what a route could not answer (a panic, answered
	// 500). Default: slog.Default(). The flows' own errors go to the
	// Service's logger.
	Logger *slog.Logger

	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Rand is the source of challenges, cookie keys and user handles.
	// Default: crypto/rand.Reader.
	Rand io.Reader
}

// Handler serves the passkey routes under Prefix. Make one with New.
type Handler struct {
	svc          *auth.Service
	store        user.Passkeys
	wa           *webauthn.WebAuthn
	cfg          Config
	passwordless bool
	secure       bool // the challenge cookie is Secure: some origin is https
	begin        *auth.RateLimit
	mux          *http.ServeMux
}

// New returns the handler of svc's passkeys. svc's Config.Users must
// implement user.Passkeys.
func New(svc *auth.Service, cfg Config) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("passkeys: New needs an auth.Service")
	}
	st, ok := svc.Users().(user.Passkeys)
	if !ok {
		return nil, fmt.Errorf("passkeys: auth.Config.Users (%T) does not implement user.Passkeys, which passkeys need: implement it", svc.Users())
	}
	if cfg.RPID == "" || len(cfg.Origins) == 0 {
		return nil, errors.New("passkeys: Config.RPID and Config.Origins are required")
	}
	h := &Handler{svc: svc, store: st, cfg: cfg, passwordless: cfg.AllowPasswordless == nil || *cfg.AllowPasswordless}
	h.cfg.Origins = append([]string(nil), cfg.Origins...)
	for _, o := range h.cfg.Origins {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || u.Path != "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("passkeys: Config.Origins: %q is not an origin (scheme://host[:port])", o)
		}
		host := u.Hostname()
		if host != cfg.RPID && !strings.HasSuffix(host, "."+cfg.RPID) {
			return nil, fmt.Errorf("passkeys: Config.Origins: %q is not on RPID %q", o, cfg.RPID)
		}
		h.secure = h.secure || u.Scheme == "https"
	}
	if h.cfg.RPDisplayName == "" {
		h.cfg.RPDisplayName = cfg.RPID
	}
	if h.cfg.Challenges == nil {
		h.cfg.Challenges = NewMemoryChallenges(MemoryConfig{Now: cfg.Now})
	}
	if h.cfg.ChallengeLifetime <= 0 {
		h.cfg.ChallengeLifetime = DefaultChallengeLifetime
	}
	if h.cfg.BeginLimit == (auth.Limit{}) {
		h.cfg.BeginLimit = auth.Limit{Max: 30, Window: time.Minute}
	}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
	}
	if h.cfg.Logger == nil {
		h.cfg.Logger = slog.Default()
	}
	if h.cfg.Rand == nil {
		h.cfg.Rand = rand.Reader
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  h.cfg.RPID,
		RPDisplayName:         h.cfg.RPDisplayName,
		RPOrigins:             h.cfg.Origins,
		AttestationPreference: protocol.PreferNoAttestation,
	})
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	h.wa = wa
	if h.cfg.BeginLimit.Max > 0 {
		if h.begin, err = svc.NewRateLimit("passkey:begin", h.cfg.BeginLimit, nil, ""); err != nil {
			return nil, fmt.Errorf("passkeys: %w", err)
		}
	}
	h.routes()
	return h, nil
}

// Close stops the background work of the begin limit's default store.
func (h *Handler) Close() error {
	if h.begin != nil {
		return h.begin.Close()
	}
	return nil
}

// ServeHTTP serves the routes under Prefix (see the package docs).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// route is one JSON route: it returns the answer's body or an error, and
// may add cookies.
type route func(c *call) (any, error)

// call is one request to a route.
type call struct {
	r       *http.Request
	v       *auth.Visit
	cookies []*http.Cookie
}

func (h *Handler) routes() {
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET "+Prefix+"/passkeys.js", serveScript)
	allow := map[string]string{Prefix + "/passkeys.js": "GET, HEAD"}
	for _, rt := range []struct {
		pattern string
		begin   bool
		fn      route
	}{
		{"POST " + Prefix + "/register/begin", true, h.registerBegin},
		{"POST " + Prefix + "/register/finish", false, h.registerFinish},
		{"POST " + Prefix + "/2fa/begin", true, h.twoFactorBegin},
		{"POST " + Prefix + "/2fa/finish", false, h.twoFactorFinish},
		{"POST " + Prefix + "/login/begin", true, h.loginBegin},
		{"POST " + Prefix + "/login/finish", false, h.loginFinish},
		{"GET " + Prefix, false, h.list},
		{"POST " + Prefix + "/rename", false, h.rename},
		{"POST " + Prefix + "/delete", false, h.remove},
	} {
		h.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, rt.pattern, rt.begin, rt.fn) })
		method, path, _ := strings.Cut(rt.pattern, " ")
		allow[path] = method
	}
	// Any other method on a known path, and any other path: JSON, as
	// core's routes answer them.
	other := func(w http.ResponseWriter, r *http.Request) {
		req := auth.HTTPRequest(r, nil)
		resp := h.svc.NotFound(req)
		if a, ok := allow[r.URL.Path]; ok {
			resp = h.svc.MethodNotAllowed(req, a)
		}
		resp.Write(w)
	}
	h.mux.HandleFunc(Prefix, other)
	h.mux.HandleFunc(Prefix+"/", other)
}

// serve runs one route: the cross-origin check of every state-changing
// route, the begin limit, the route, and one answer.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, op string, begin bool, fn route) {
	defer func() {
		// No request may end the process: a panic in a ceremony (go-webauthn
		// on input nobody foresaw) answers 500, as core's routes do.
		if p := recover(); p != nil {
			h.cfg.Logger.ErrorContext(r.Context(), "passkeys: panic in route", "route", op, "panic", p)
			resp := h.svc.Error(http.StatusInternalServerError, "")
			resp.Write(w)
		}
	}()
	req := auth.HTTPRequest(r, nil)
	v := h.svc.Visit(req)
	var err error
	var body any
	var extra http.Header
	if r.Method != http.MethodGet {
		err = h.svc.CheckOrigin(req)
	}
	if err == nil && begin && h.begin != nil {
		var limited *auth.Response
		if extra, limited = h.begin.Check(req); limited != nil {
			limited.Write(w)
			return
		}
	}
	c := &call{r: r, v: v}
	if err == nil {
		body, err = fn(c)
	}
	resp := h.svc.Answer(v, op, body, err)
	for k, vs := range extra {
		if resp.Header.Get(k) == "" {
			resp.Header[k] = vs
		}
	}
	resp.Cookies = append(resp.Cookies, c.cookies...)
	resp.Write(w)
}

// The ceremonies' state.

// purpose says what a ceremony is for; a finish route takes only its own.
type purpose string

const (
	purposeRegister     purpose = "register"
	purposeTwoFactor    purpose = "2fa"
	purposePasswordless purpose = "passwordless"
)

// ceremony is what Config.Challenges keeps between begin and finish.
type ceremony struct {
	Purpose purpose              `json:"purpose"`
	UserID  string               `json:"userId,omitempty"`  // register, 2fa: the user it was begun for
	Pending []byte               `json:"pending,omitempty"` // 2fa: SHA-256 of the 2fa_pending cookie it was begun under
	Session webauthn.SessionData `json:"session"`
}

// start stores a ceremony and sets the challenge cookie naming it. The
// cookie holds a random key; the store holds the state under the key's
// SHA-256, so a copy of the store names no live cookie.
func (h *Handler) start(c *call, cer ceremony) error {
	key := make([]byte, 32)
	if _, err := io.ReadFull(h.cfg.Rand, key); err != nil {
		return fmt.Errorf("passkeys: challenge key: %w", err)
	}
	data, err := json.Marshal(cer)
	if err != nil {
		return fmt.Errorf("passkeys: encode ceremony: %w", err)
	}
	raw := base64.RawURLEncoding.EncodeToString(key)
	if err := h.cfg.Challenges.Put(c.r.Context(), storeKey(raw), data, h.cfg.Now().Add(h.cfg.ChallengeLifetime)); err != nil {
		return fmt.Errorf("passkeys: store challenge: %w: %w", user.ErrUnavailable, err)
	}
	c.cookies = append(c.cookies, h.challengeCookie(raw, int(h.cfg.ChallengeLifetime.Seconds())))
	return nil
}

// take consumes the ceremony the request's challenge cookie names, whatever
// the finish then decides: a challenge answers once. It must be of want.
func (h *Handler) take(c *call, want purpose) (ceremony, error) {
	c.cookies = append(c.cookies, h.challengeCookie("", -1))
	ck, err := c.r.Cookie(ChallengeCookie)
	if err != nil || ck.Value == "" {
		return ceremony{}, auth.ErrPasskeyChallengeInvalid
	}
	data, err := h.cfg.Challenges.Take(c.r.Context(), storeKey(ck.Value), h.cfg.Now())
	if errors.Is(err, ErrChallengeNotFound) {
		return ceremony{}, auth.ErrPasskeyChallengeInvalid
	}
	if err != nil {
		return ceremony{}, fmt.Errorf("passkeys: take challenge: %w: %w", user.ErrUnavailable, err)
	}
	var cer ceremony
	if err := json.Unmarshal(data, &cer); err != nil {
		return ceremony{}, fmt.Errorf("passkeys: decode ceremony: %w", err)
	}
	if cer.Purpose != want {
		return ceremony{}, auth.ErrPasskeyChallengeInvalid
	}
	return cer, nil
}

func storeKey(raw string) string {
	sum := sha256.Sum256([]byte("authkit/passkey-challenge/" + raw))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (h *Handler) challengeCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: ChallengeCookie, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode}
}

// pendingHash is the SHA-256 of the request's 2fa_pending cookie: a 2FA
// ceremony is bound to the pending login it was begun under.
func pendingHash(r *http.Request) []byte {
	ck, err := r.Cookie(auth.PendingCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(ck.Value))
	return sum[:]
}

// The WebAuthn user.

// account is a user and their credentials as go-webauthn sees them.
type account struct {
	u      *user.User
	handle []byte
	keys   []*user.Passkey
}

func (a *account) WebAuthnID() []byte          { return a.handle }
func (a *account) WebAuthnName() string        { return a.u.Email }
func (a *account) WebAuthnDisplayName() string { return cmpOr(a.u.Name, a.u.Email) }
func (a *account) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, 0, len(a.keys))
	for _, p := range a.keys {
		ts := make([]protocol.AuthenticatorTransport, len(p.Transports))
		for i, t := range p.Transports {
			ts[i] = protocol.AuthenticatorTransport(t)
		}
		out = append(out, webauthn.Credential{
			ID: p.ID, PublicKey: p.PublicKey, AttestationType: p.AttestationType, Transport: ts,
			Flags:         webauthn.CredentialFlags{UserPresent: true, BackupEligible: p.BackupEligible, BackupState: p.BackupState},
			Authenticator: webauthn.Authenticator{AAGUID: p.AAGUID, SignCount: p.SignCount},
		})
	}
	return out
}

// key returns the account's passkey with credential id id.
func (a *account) key(id []byte) *user.Passkey {
	for _, p := range a.keys {
		if bytes.Equal(p.ID, id) {
			return p
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// account loads u's handle (made on first use: random, never the id or the
// email) and passkeys.
func (h *Handler) account(ctx context.Context, u *user.User) (*account, error) {
	candidate := make([]byte, 32)
	if _, err := io.ReadFull(h.cfg.Rand, candidate); err != nil {
		return nil, fmt.Errorf("passkeys: user handle: %w", err)
	}
	handle, err := h.store.PasskeyUserHandle(ctx, u.ID, candidate)
	if err != nil {
		return nil, fmt.Errorf("passkeys: user handle: %w", err)
	}
	keys, err := h.store.ListPasskeys(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("passkeys: list: %w", err)
	}
	return &account{u: u, handle: handle, keys: keys}, nil
}

// Registration.

func (h *Handler) registerBegin(c *call) (any, error) {
	u, err := h.svc.RecentUser(c.r.Context(), c.v)
	if err != nil {
		return nil, err
	}
	acct, err := h.account(c.r.Context(), u)
	if err != nil {
		return nil, err
	}
	resident := protocol.ResidentKeyRequirementPreferred
	if h.passwordless {
		resident = protocol.ResidentKeyRequirementRequired
	}
	opts, sess, err := h.wa.BeginRegistration(acct,
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: resident, RequireResidentKey: requireResident(resident), UserVerification: protocol.VerificationPreferred,
		}),
		webauthn.WithResidentKeyRequirement(resident),
		webauthn.WithExclusions(webauthn.Credentials(acct.WebAuthnCredentials()).CredentialDescriptors()),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation),
	)
	if err != nil {
		return nil, fmt.Errorf("passkeys: begin registration: %w", err)
	}
	if err := h.start(c, ceremony{Purpose: purposeRegister, UserID: u.ID, Session: *sess}); err != nil {
		return nil, err
	}
	return opts, nil
}

// registration is the body of register/finish: the PublicKeyCredential as
// the browser returns it (toJSON), and the name the user gave it.
type registration struct {
	protocol.CredentialCreationResponse
	Name string `json:"name"`
}

func (h *Handler) registerFinish(c *call) (any, error) {
	cer, err := h.take(c, purposeRegister)
	if err != nil {
		return nil, err
	}
	u, err := h.svc.RecentUser(c.r.Context(), c.v)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(u.ID), []byte(cer.UserID)) != 1 {
		return nil, auth.ErrPasskeyChallengeInvalid
	}
	var body registration
	if err := readJSON(c.r, &body); err != nil {
		return nil, err
	}
	name, err := cleanName(body.Name)
	if err != nil {
		return nil, err
	}
	parsed, err := body.CredentialCreationResponse.Parse()
	if err != nil {
		return nil, auth.ErrPasskeyInvalid
	}
	// The credential id the client names must be the one the authenticator
	// attested (go-webauthn checks it from v0.18, which needs Go 1.26).
	if !bytes.Equal(parsed.RawID, parsed.Response.AttestationObject.AuthData.AttData.CredentialID) {
		return nil, auth.ErrPasskeyInvalid
	}
	acct, err := h.account(c.r.Context(), u)
	if err != nil {
		return nil, err
	}
	cred, err := h.wa.CreateCredential(acct, cer.Session, parsed)
	if err != nil {
		return nil, auth.ErrPasskeyInvalid
	}
	transports := make([]string, len(cred.Transport))
	for i, t := range cred.Transport {
		transports[i] = string(t)
	}
	p := &user.Passkey{
		ID: cred.ID, UserID: u.ID, UserHandle: acct.handle, PublicKey: cred.PublicKey,
		SignCount: cred.Authenticator.SignCount, BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState,
		Transports: transports, AttestationType: cred.AttestationType, AAGUID: cred.Authenticator.AAGUID,
		Name: name, CreatedAt: h.cfg.Now(),
	}
	if err := h.store.AddPasskey(c.r.Context(), p); err != nil {
		if errors.Is(err, user.ErrConflict) {
			return nil, auth.ErrPasskeyAlreadyRegistered
		}
		return nil, fmt.Errorf("passkeys: add: %w", err)
	}
	h.svc.Audit(c.v, auth.Event{Type: auth.EventPasskeyAdded, UserID: u.ID, Detail: name})
	h.svc.Notify(c.v, mailPasskeyAdded, u, mailData(name))
	return view(auth.NewPasskeyInfo(p)), nil
}

// Signing in.

func (h *Handler) twoFactorBegin(c *call) (any, error) {
	u, err := h.svc.PendingTwoFactorUser(c.r.Context(), c.v)
	if err != nil {
		return nil, err
	}
	acct, err := h.account(c.r.Context(), u)
	if err != nil {
		return nil, err
	}
	if len(acct.keys) == 0 {
		return nil, auth.ErrPasskeyNotFound
	}
	opts, sess, err := h.wa.BeginLogin(acct, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return nil, fmt.Errorf("passkeys: begin 2fa: %w", err)
	}
	if err := h.start(c, ceremony{Purpose: purposeTwoFactor, UserID: u.ID, Pending: pendingHash(c.r), Session: *sess}); err != nil {
		return nil, err
	}
	return opts, nil
}

// assertion is the body of the login finish routes: the PublicKeyCredential
// as the browser returns it (toJSON), and the remember flag of the login.
type assertion struct {
	protocol.CredentialAssertionResponse
	Remember *bool `json:"remember"`
}

func (h *Handler) twoFactorFinish(c *call) (any, error) {
	cer, err := h.take(c, purposeTwoFactor)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(cer.Pending, pendingHash(c.r)) != 1 {
		return nil, auth.ErrPasskeyChallengeInvalid
	}
	var body assertion
	if err := readJSON(c.r, &body); err != nil {
		return nil, err
	}
	_, err = h.svc.FinishTwoFactor(c.r.Context(), c.v, auth.SecondFactorInput{
		Method:   auth.LoginPasskey,
		Remember: body.Remember,
		Verify: func(ctx context.Context, u *user.User) error {
			if subtle.ConstantTimeCompare([]byte(u.ID), []byte(cer.UserID)) != 1 {
				return auth.ErrPasskeyChallengeInvalid
			}
			acct, err := h.account(ctx, u)
			if err != nil {
				return err
			}
			parsed, err := body.CredentialAssertionResponse.Parse()
			if err != nil {
				return auth.ErrPasskeyInvalid
			}
			cred, err := h.wa.ValidateLogin(acct, cer.Session, parsed)
			if err != nil {
				return auth.ErrPasskeyInvalid
			}
			return h.used(ctx, c, acct, cred, parsed)
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

func (h *Handler) loginBegin(c *call) (any, error) {
	if !h.passwordless {
		return nil, auth.ErrFeatureDisabled
	}
	opts, sess, err := h.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("passkeys: begin login: %w", err)
	}
	if err := h.start(c, ceremony{Purpose: purposePasswordless, Session: *sess}); err != nil {
		return nil, err
	}
	return opts, nil
}

func (h *Handler) loginFinish(c *call) (any, error) {
	if !h.passwordless {
		return nil, auth.ErrFeatureDisabled
	}
	cer, err := h.take(c, purposePasswordless)
	if err != nil {
		return nil, err
	}
	var body assertion
	if err := readJSON(c.r, &body); err != nil {
		return nil, err
	}
	_, err = h.svc.SignInWithoutPassword(c.r.Context(), c.v, auth.PasswordlessInput{
		Method:   auth.LoginPasskey,
		Remember: body.Remember != nil && *body.Remember,
		Verify: func(ctx context.Context) (string, error) {
			parsed, err := body.CredentialAssertionResponse.Parse()
			if err != nil {
				return "", auth.ErrPasskeyInvalid
			}
			var acct *account
			var lookupErr error
			_, cred, err := h.wa.ValidatePasskeyLogin(func(rawID, handle []byte) (webauthn.User, error) {
				u, err := h.store.ByPasskeyUserHandle(ctx, handle)
				if err != nil {
					lookupErr = err
					return nil, err
				}
				if acct, err = h.account(ctx, u); err != nil {
					lookupErr = err
					return nil, err
				}
				return acct, nil
			}, cer.Session, parsed)
			if lookupErr != nil && !errors.Is(lookupErr, user.ErrNotFound) {
				return "", lookupErr
			}
			if err != nil {
				return "", auth.ErrPasskeyInvalid
			}
			return acct.u.ID, h.used(ctx, c, acct, cred, parsed)
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

// used records a verified assertion: the counter and the backup state, on
// the condition that the stored counter is still the one checked. A
// counter that did not go up (and is not zero on both sides) is audited
// and, with RefuseCounterRegression, refused.
func (h *Handler) used(ctx context.Context, c *call, acct *account, cred *webauthn.Credential, parsed *protocol.ParsedCredentialAssertionData) error {
	p := acct.key(cred.ID)
	if p == nil {
		return auth.ErrPasskeyInvalid
	}
	got := parsed.Response.AuthenticatorData.Counter
	if cred.Authenticator.CloneWarning {
		refused := h.cfg.RefuseCounterRegression
		h.svc.Audit(c.v, auth.Event{Type: auth.EventPasskeyCountRegressed, UserID: acct.u.ID,
			Detail: fmt.Sprintf("stored %d, received %d, refused %t", p.SignCount, got, refused)})
		if refused {
			return auth.ErrPasskeyCountRegressed
		}
	}
	err := h.store.UsePasskey(ctx, acct.u.ID, p.ID, user.PasskeyUse{
		OldSignCount: p.SignCount, SignCount: cred.Authenticator.SignCount,
		BackupState: cred.Flags.BackupState, At: h.cfg.Now(),
	})
	switch {
	case errors.Is(err, user.ErrConflict), errors.Is(err, user.ErrNotFound):
		// Another assertion of this credential was recorded since it was
		// read, or it was deleted: this one is refused.
		return auth.ErrPasskeyInvalid
	case err != nil:
		return fmt.Errorf("passkeys: record use: %w", err)
	}
	return nil
}

// Management.

// View is a passkey as the list route shows it.
type View struct {
	ID             string     `json:"id"` // the credential id, base64url
	Name           string     `json:"name"`
	CreatedAt      time.Time  `json:"createdAt"`
	LastUsedAt     *time.Time `json:"lastUsedAt"` // null until first used
	BackupEligible bool       `json:"backupEligible"`
	BackedUp       bool       `json:"backedUp"`
}

// view is a passkey in the JSON of the routes.
func view(p auth.PasskeyInfo) View {
	v := View{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt.UTC(), BackupEligible: p.BackupEligible, BackedUp: p.BackedUp}
	if !p.LastUsedAt.IsZero() {
		t := p.LastUsedAt.UTC()
		v.LastUsedAt = &t
	}
	return v
}

// list, rename and remove are the routes of auth.Service's ListPasskeys,
// RenamePasskey and DeletePasskey, where their rules are.

func (h *Handler) list(c *call) (any, error) {
	keys, err := h.svc.ListPasskeys(c.r.Context(), c.v)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(keys))
	for i, p := range keys {
		out[i] = view(p)
	}
	return map[string]any{"passkeys": out}, nil
}

// change is the body of rename and delete.
type change struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (h *Handler) rename(c *call) (any, error) {
	if _, err := h.svc.CurrentUser(c.r.Context(), c.v); err != nil {
		return nil, err // not signed in: 401 before the body is read
	}
	var body change
	if err := readJSON(c.r, &body); err != nil {
		return nil, err
	}
	p, err := h.svc.RenamePasskey(c.r.Context(), c.v, auth.RenamePasskeyInput{ID: body.ID, Name: body.Name})
	if err != nil {
		return nil, err
	}
	return view(p), nil
}

func (h *Handler) remove(c *call) (any, error) {
	if _, err := h.svc.RecentUser(c.r.Context(), c.v); err != nil {
		return nil, err // not signed in or not recently: before the body is read
	}
	var body change
	if err := readJSON(c.r, &body); err != nil {
		return nil, err
	}
	if err := h.svc.DeletePasskey(c.r.Context(), c.v, auth.DeletePasskeyInput{ID: body.ID}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

// Input.

// readJSON decodes the request's JSON body into dst.
func readJSON(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return auth.ErrUnsupportedContentType
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return auth.ErrUnreadableBody
	}
	if len(b) > maxBody {
		return auth.ErrBodyTooLarge
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return auth.ErrInvalidJSON
	}
	return nil
}

// cleanName is the name given at registration: auth.CheckPasskeyName's
// rule, with an empty name "Passkey".
func cleanName(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "Passkey", nil
	}
	return auth.CheckPasskeyName(name)
}

// The script.

//go:embed assets/passkeys.js
var script []byte

// Script is assets/passkeys.js, which the handler serves at
// Prefix+"/passkeys.js".
func Script() []byte { return bytes.Clone(script) }

func serveScript(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(script)
}

func requireResident(r protocol.ResidentKeyRequirement) *bool {
	if r == protocol.ResidentKeyRequirementRequired {
		return protocol.ResidentKeyRequired()
	}
	return protocol.ResidentKeyNotRequired()
}

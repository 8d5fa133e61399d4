package passkeys

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/onetime"
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
	// in-process store (one instance; see ChallengeStore) that anonymous
	// begins cannot fill for anyone else: see the package documentation,
	// "The default challenge store".
	Challenges ChallengeStore
	// ChallengeCapacity is how many anonymous ceremonies the default
	// store holds, and how many of signed-in users besides (at most 8 per
	// user); when one part is full, its oldest ceremony is dropped. It
	// does not apply to a Challenges store of the app's. Default:
	// DefaultChallengeCapacity (100000).
	ChallengeCapacity int
	// ChallengeLifetime is how long a begun ceremony lasts. Default:
	// DefaultChallengeLifetime.
	ChallengeLifetime time.Duration
	// BeginLimit limits the begin ceremonies per client address, so that
	// the challenge store cannot be filled. Default: 30 per minute.
	BeginLimit auth.Limit
	// CookiePath is the Path of the challenge cookie: the browser sends it
	// only to the finish requests under it. Default: Prefix. An app that
	// calls the ceremony methods from its own handlers at other paths sets
	// a path above them all ("/" will do).
	CookiePath string

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

// Handler holds the passkey ceremonies of one Service; New adds their
// routes under Prefix to the Service's route table, which the framework
// modules serve. Make one with New.
type Handler struct {
	svc          *auth.Service
	store        user.Passkeys
	wa           *webauthn.WebAuthn
	cfg          Config
	passwordless bool
	secure       bool // the challenge cookie is Secure: some origin is https
	begin        *auth.RateLimit
	pool         *challengePool // the default Challenges; nil with the app's store
	fullAt       atomic.Int64   // when a full Challenges store of the app's was last logged (Unix ns)
}

// New returns the handler of svc's passkeys and adds its routes to svc
// (auth.Modules.AddRoutes), so call it before mounting svc with a framework
// module: once svc's routes were served, or for a second Handler of one
// Service, it returns an error. svc's Config.Users must implement
// user.Passkeys.
func New(svc *auth.Service, cfg Config) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("passkeys: New needs an auth.Service")
	}
	st, ok := svc.Modules().PasskeyStore()
	if !ok {
		return nil, fmt.Errorf("passkeys: auth.Config.Users (%T) does not implement user.Passkeys, which passkeys need: implement it", svc.Modules().Users())
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
	if h.cfg.CookiePath == "" {
		h.cfg.CookiePath = Prefix
	}
	if h.cfg.RPDisplayName == "" {
		h.cfg.RPDisplayName = cfg.RPID
	}
	if h.cfg.Logger == nil {
		h.cfg.Logger = slog.Default()
	}
	if h.cfg.Challenges == nil {
		h.pool = newChallengePool(cfg.ChallengeCapacity, cfg.Now, h.cfg.Logger)
		h.cfg.Challenges = h.pool
	}
	h.cfg.Challenges = svc.Modules().ObserveOneTime("Challenges", h.cfg.Challenges)
	if h.cfg.ChallengeLifetime <= 0 {
		h.cfg.ChallengeLifetime = DefaultChallengeLifetime
	}
	if h.cfg.BeginLimit == (auth.Limit{}) {
		h.cfg.BeginLimit = auth.Limit{Max: 30, Window: time.Minute}
	}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
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
	if err := svc.Modules().AddRoutes(h.routes()...); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	return h, nil
}

// Close stops the background work of the begin limit's default store.
func (h *Handler) Close() error {
	if h.begin != nil {
		return h.begin.Close()
	}
	return nil
}

// The ceremonies' state.

// purpose says what a ceremony is for; a finish route takes only its own.
type purpose string

const (
	purposeRegister     purpose = "register"
	purposeTwoFactor    purpose = "2fa"
	purposePasswordless purpose = "passwordless"
	purposeSignUp       purpose = "signup"
)

// ceremony is what Config.Challenges keeps between begin and finish.
type ceremony struct {
	Purpose purpose              `json:"purpose"`
	UserID  string               `json:"userId,omitempty"`  // register, 2fa: the user it was begun for
	Pending []byte               `json:"pending,omitempty"` // 2fa: SHA-256 of the 2fa_pending cookie it was begun under
	Email   string               `json:"email,omitempty"`   // signup: the account's address, normalised
	Name    string               `json:"name,omitempty"`    // signup: the account's name
	Session webauthn.SessionData `json:"session"`
}

// start stores a ceremony and sets the challenge cookie naming it. The
// cookie holds a random key; the store holds the state under the key's
// SHA-256, so a copy of the store names no live cookie.
func (h *Handler) start(ctx context.Context, v *auth.Visit, cer ceremony) error {
	key := make([]byte, 32)
	if _, err := io.ReadFull(h.cfg.Rand, key); err != nil {
		return fmt.Errorf("passkeys: challenge key: %w", err)
	}
	data, err := json.Marshal(cer)
	if err != nil {
		return fmt.Errorf("passkeys: encode ceremony: %w", err)
	}
	raw := base64.RawURLEncoding.EncodeToString(key)
	st := h.cfg.Challenges
	if h.pool != nil && cer.UserID != "" {
		// The default store keeps a user's ceremonies apart from the
		// anonymous ones, which anybody can begin.
		st = h.svc.Modules().ObserveOneTime("Challenges", h.pool.owned(cer.UserID))
	}
	if err := st.Put(ctx, storeKey(raw), data, h.cfg.Now().Add(h.cfg.ChallengeLifetime)); err != nil {
		if errors.Is(err, onetime.ErrFull) {
			h.storeFull(ctx, err)
			return auth.ErrUnavailable
		}
		return fmt.Errorf("passkeys: store challenge: %w: %w", user.ErrUnavailable, err)
	}
	v.SetCookie(h.challengeCookie(raw, int(h.cfg.ChallengeLifetime.Seconds())))
	return nil
}

// take consumes the ceremony the request's challenge cookie names, whatever
// the finish then decides: a challenge answers once. It must be of want.
func (h *Handler) take(ctx context.Context, v *auth.Visit, want purpose) (ceremony, error) {
	v.SetCookie(h.challengeCookie("", -1))
	raw, ok := v.Cookie(ChallengeCookie)
	if !ok || raw == "" {
		return ceremony{}, auth.ErrPasskeyChallengeInvalid
	}
	data, err := h.cfg.Challenges.Take(ctx, storeKey(raw), h.cfg.Now())
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

// storeFull logs that the app's Challenges store refused a ceremony
// because it is full, at most once a minute: the begins it refuses answer
// 503 without a log line each, so that a flood cannot flood the log too.
func (h *Handler) storeFull(ctx context.Context, err error) {
	now := h.cfg.Now().UnixNano()
	last := h.fullAt.Load()
	if last != 0 && now-last < int64(poolReportInterval) {
		return
	}
	if h.fullAt.CompareAndSwap(last, now) {
		h.cfg.Logger.ErrorContext(ctx, "passkeys: the challenge store is full: passkey ceremonies are refused (503)", "err", err)
	}
}

func storeKey(raw string) string {
	sum := sha256.Sum256([]byte("authkit/passkey-challenge/" + raw))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (h *Handler) challengeCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: ChallengeCookie, Value: value, Path: h.cfg.CookiePath, MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode}
}

// pendingHash is the SHA-256 of the request's 2fa_pending cookie: a 2FA
// ceremony is bound to the pending login it was begun under.
func pendingHash(v *auth.Visit) []byte {
	raw, ok := v.Cookie(auth.PendingCookie)
	if !ok || raw == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(raw))
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

// The ceremonies. Each is a typed method taking the request's auth.Visit,
// as core's flows do: the challenge cookie is read from and set on the
// visit, and the answer's cookies and headers are the visit's
// (auth.Visit.WriteHeaders, or Cookies and Header), so an app can call them
// from its own handlers on any framework. The routes under Prefix decode
// the body, call them and render what they return. An error is an
// *auth.Error to answer with (auth.AsError maps any other to 500 or 503;
// log it); a panic in go-webauthn is returned as an error, never raised.

// RegistrationInput is what FinishRegistration takes.
type RegistrationInput struct {
	// Credential is the PublicKeyCredential that the browser's
	// navigator.credentials.create gave, as its toJSON() serialises it
	// (members other than the credential's are ignored).
	Credential []byte
	// Name is the user's name for the passkey: see auth.CheckPasskeyName.
	// Default: "Passkey".
	Name string
}

// TwoFactorInput is what FinishTwoFactor takes.
type TwoFactorInput struct {
	// Assertion is the PublicKeyCredential that navigator.credentials.get
	// gave, as its toJSON() serialises it.
	Assertion []byte
	// Remember, when set, overrides the remember flag of the password step.
	Remember *bool
	// TrustDevice marks the browser as trusted on success, as a TOTP code's
	// "trustDevice" does: later password logins from it skip the second
	// step. Ignored unless auth.Config.TrustedDevices is set.
	TrustDevice bool
}

// LoginInput is what FinishLogin takes.
type LoginInput struct {
	// Assertion is the PublicKeyCredential that navigator.credentials.get
	// gave, as its toJSON() serialises it.
	Assertion []byte
	// Remember asks for a long-lived session.
	Remember bool
}

// observe starts the observation of the flow name (auth.Modules.Observe)
// for the ceremony op and returns its context and the function to defer
// with the flow's error: it turns a panic of the ceremony into its error
// (no request ends the process), then ends the observation with it.
func (h *Handler) observe(ctx context.Context, v *auth.Visit, name, op string) (context.Context, func(err *error)) {
	ctx, end := h.svc.Modules().Observe(ctx, v, auth.Flow{Name: name})
	return ctx, func(err *error) {
		if p := recover(); p != nil {
			*err = fmt.Errorf("passkeys: panic in %s: %v", op, p)
		}
		end(*err)
	}
}

// limitBegin counts a begin against Config.BeginLimit.
func (h *Handler) limitBegin(ctx context.Context, v *auth.Visit) error {
	if h.begin == nil {
		return nil
	}
	return h.begin.Attempt(ctx, v)
}

// BeginRegistration starts adding a passkey for the visit's signed-in
// user, who must have authenticated recently
// (auth.ErrReauthenticationRequired; auth.ErrNotAuthenticated without a
// session) and, while the Service verifies addresses, have a verified one
// (auth.ErrEmailNotVerified). It counts against Config.BeginLimit, keeps the ceremony in
// Config.Challenges, sets the challenge cookie on v and returns the
// options of navigator.credentials.create: their JSON ({"publicKey": ...})
// is what the browser's PublicKeyCredential.parseCreationOptionsFromJSON
// takes. The user's passkeys are excluded, attestation is "none", and a
// discoverable credential is required when passwordless sign-in is on
// (preferred otherwise).
func (h *Handler) BeginRegistration(ctx context.Context, v *auth.Visit) (opts *protocol.CredentialCreation, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/register/begin", "begin registration")
	defer done(&err)
	if err := h.limitBegin(ctx, v); err != nil {
		return nil, err
	}
	u, err := h.registrant(ctx, v)
	if err != nil {
		return nil, err
	}
	acct, err := h.account(ctx, u)
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
	if err := h.start(ctx, v, ceremony{Purpose: purposeRegister, UserID: u.ID, Session: *sess}); err != nil {
		return nil, err
	}
	return opts, nil
}

// FinishRegistration verifies the credential of the ceremony that
// BeginRegistration began on this browser and stores it as a passkey of the
// signed-in user, who must be the one it was begun for and still have
// authenticated recently. The ceremony is taken first, whatever then
// fails: auth.ErrPasskeyChallengeInvalid for none (a replay, a race lost,
// expired, another purpose or user), auth.ErrPasskeyInvalid for a
// credential that does not verify (origin, RP ID, challenge, a credential
// id that is not the attested one), auth.ErrPasskeyAlreadyRegistered for
// a credential id stored already; auth.ErrNotAuthenticated when a password
// reset or logout-everywhere ended the session while the passkey was being
// stored (it is deleted again). A success is audited
// (auth.EventPasskeyAdded), mails the owner the notice, and returns the
// passkey as auth.Service.ListPasskeys shows it.
func (h *Handler) FinishRegistration(ctx context.Context, v *auth.Visit, in RegistrationInput) (info auth.PasskeyInfo, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/register/finish", "finish registration")
	defer done(&err)
	cer, err := h.take(ctx, v, purposeRegister)
	if err != nil {
		return auth.PasskeyInfo{}, err
	}
	u, err := h.registrant(ctx, v)
	if err != nil {
		return auth.PasskeyInfo{}, err
	}
	if subtle.ConstantTimeCompare([]byte(u.ID), []byte(cer.UserID)) != 1 {
		return auth.PasskeyInfo{}, auth.ErrPasskeyChallengeInvalid
	}
	name, err := cleanName(in.Name)
	if err != nil {
		return auth.PasskeyInfo{}, err
	}
	var resp protocol.CredentialCreationResponse
	if err := json.Unmarshal(in.Credential, &resp); err != nil {
		return auth.PasskeyInfo{}, auth.ErrPasskeyInvalid
	}
	parsed, err := resp.Parse()
	if err != nil {
		return auth.PasskeyInfo{}, auth.ErrPasskeyInvalid
	}
	// The credential id the client names must be the one the authenticator
	// attested (go-webauthn checks it from v0.18, which needs Go 1.26).
	if !bytes.Equal(parsed.RawID, parsed.Response.AttestationObject.AuthData.AttData.CredentialID) {
		return auth.PasskeyInfo{}, auth.ErrPasskeyInvalid
	}
	acct, err := h.account(ctx, u)
	if err != nil {
		return auth.PasskeyInfo{}, err
	}
	cred, err := h.wa.CreateCredential(acct, cer.Session, parsed)
	if err != nil {
		return auth.PasskeyInfo{}, auth.ErrPasskeyInvalid
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
	if err := h.store.AddPasskey(ctx, p); err != nil {
		if errors.Is(err, user.ErrConflict) {
			return auth.PasskeyInfo{}, auth.ErrPasskeyAlreadyRegistered
		}
		return auth.PasskeyInfo{}, fmt.Errorf("passkeys: add: %w", err)
	}
	if err := h.stillValid(ctx, u, p); err != nil {
		return auth.PasskeyInfo{}, err
	}
	h.svc.Modules().Audit(ctx, v, auth.Event{Type: auth.EventPasskeyAdded, UserID: u.ID, Detail: name})
	h.svc.Modules().Notify(ctx, v, mailPasskeyAdded, u, mailData(name))
	return auth.NewPasskeyInfo(p), nil
}

// BeginTwoFactor starts a passkey as the second step of the visit's
// pending 2FA login (the 2fa_pending cookie: auth.ErrNoPendingTwoFactor,
// auth.ErrTwoFactorExpired). It counts against Config.BeginLimit, binds the
// ceremony to that pending login, sets the challenge cookie on v and
// returns the options of navigator.credentials.get allowing the user's
// passkeys; auth.ErrPasskeyNotFound when they have none.
func (h *Handler) BeginTwoFactor(ctx context.Context, v *auth.Visit) (opts *protocol.CredentialAssertion, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/2fa/begin", "begin 2fa")
	defer done(&err)
	if err := h.limitBegin(ctx, v); err != nil {
		return nil, err
	}
	u, err := h.svc.Modules().PendingTwoFactorUser(ctx, v)
	if err != nil {
		return nil, err
	}
	return h.beginAssertion(ctx, v, u, protocol.VerificationPreferred, ceremony{Purpose: purposeTwoFactor, Pending: pendingHash(v)}, "begin 2fa")
}

// beginAssertion is the end of the begins that ask u, known already, for
// an assertion by one of their passkeys (auth.ErrPasskeyNotFound when they
// have none): it starts the ceremony cer, bound to u, with the user
// verification uv and returns the options of navigator.credentials.get.
// op names the step in a wrapped error.
func (h *Handler) beginAssertion(ctx context.Context, v *auth.Visit, u *user.User, uv protocol.UserVerificationRequirement, cer ceremony, op string) (*protocol.CredentialAssertion, error) {
	acct, err := h.account(ctx, u)
	if err != nil {
		return nil, err
	}
	if len(acct.keys) == 0 {
		return nil, auth.ErrPasskeyNotFound
	}
	opts, sess, err := h.wa.BeginLogin(acct, webauthn.WithUserVerification(uv))
	if err != nil {
		return nil, fmt.Errorf("passkeys: %s: %w", op, err)
	}
	cer.UserID, cer.Session = u.ID, *sess
	if err := h.start(ctx, v, cer); err != nil {
		return nil, err
	}
	return opts, nil
}

// FinishTwoFactor verifies the assertion of the ceremony BeginTwoFactor
// began and, through auth.Modules.FinishTwoFactor, ends the pending login
// like a TOTP code: the same pending-login checks, the same per-user limit
// (shared with TOTP and recovery codes), and a failure keeps the pending
// cookie (the challenge cookie is deleted: begin again). The ceremony is
// taken first: auth.ErrPasskeyChallengeInvalid for none, or one begun under
// another pending login; auth.ErrPasskeyInvalid for an assertion that does
// not verify; auth.ErrPasskeyCountRegressed for a counter that went
// backwards with Config.RefuseCounterRegression. in.TrustDevice trusts
// the browser on success, as the TOTP step's "trust this browser" does.
func (h *Handler) FinishTwoFactor(ctx context.Context, v *auth.Visit, in TwoFactorInput) (res auth.TwoFactorResult, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/2fa/finish", "finish 2fa")
	defer done(&err)
	cer, err := h.take(ctx, v, purposeTwoFactor)
	if err != nil {
		return auth.TwoFactorResult{}, err
	}
	if subtle.ConstantTimeCompare(cer.Pending, pendingHash(v)) != 1 {
		return auth.TwoFactorResult{}, auth.ErrPasskeyChallengeInvalid
	}
	return h.svc.Modules().FinishTwoFactor(ctx, v, auth.SecondFactorInput{
		Method:      auth.LoginPasskey,
		Remember:    in.Remember,
		TrustDevice: in.TrustDevice,
		Verify: func(ctx context.Context, u *user.User) error {
			return h.verifyAssertion(ctx, v, u, &cer, in.Assertion, false)
		},
	})
}

// verifyAssertion is the check of the finishes whose ceremony was begun for
// a known user (beginAssertion): u must be the user cer was begun for
// (auth.ErrPasskeyChallengeInvalid), and assertion must verify against one
// of u's passkeys, made with user verification when needUV
// (auth.ErrPasskeyInvalid); its use is then recorded.
func (h *Handler) verifyAssertion(ctx context.Context, v *auth.Visit, u *user.User, cer *ceremony, assertion []byte, needUV bool) error {
	if subtle.ConstantTimeCompare([]byte(u.ID), []byte(cer.UserID)) != 1 {
		return auth.ErrPasskeyChallengeInvalid
	}
	parsed, err := parseAssertion(assertion)
	if err != nil {
		return err
	}
	if needUV && !parsed.Response.AuthenticatorData.Flags.UserVerified() {
		return auth.ErrPasskeyInvalid // the ceremony required it; checked here too
	}
	acct, err := h.account(ctx, u)
	if err != nil {
		return err
	}
	cred, err := h.wa.ValidateLogin(acct, cer.Session, parsed)
	if err != nil {
		return auth.ErrPasskeyInvalid
	}
	return h.used(ctx, v, acct, cred, parsed)
}

// parseAssertion parses a PublicKeyCredential.toJSON() of
// navigator.credentials.get; anything else is auth.ErrPasskeyInvalid.
func parseAssertion(raw []byte) (*protocol.ParsedCredentialAssertionData, error) {
	var resp protocol.CredentialAssertionResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, auth.ErrPasskeyInvalid
	}
	parsed, err := resp.Parse()
	if err != nil {
		return nil, auth.ErrPasskeyInvalid
	}
	return parsed, nil
}

// BeginLogin starts a passwordless sign-in with a discoverable credential
// (also the browser's autofill, conditional UI): it counts against
// Config.BeginLimit, sets the challenge cookie on v and returns the options
// of navigator.credentials.get, without an allow list and with user
// verification required. auth.ErrFeatureDisabled when
// Config.AllowPasswordless is false.
func (h *Handler) BeginLogin(ctx context.Context, v *auth.Visit) (opts *protocol.CredentialAssertion, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/login/begin", "begin login")
	defer done(&err)
	if !h.passwordless {
		return nil, auth.ErrFeatureDisabled
	}
	if err := h.limitBegin(ctx, v); err != nil {
		return nil, err
	}
	opts, sess, err := h.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("passkeys: begin login: %w", err)
	}
	if err := h.start(ctx, v, ceremony{Purpose: purposePasswordless, Session: *sess}); err != nil {
		return nil, err
	}
	return opts, nil
}

// FinishLogin verifies the assertion of the ceremony BeginLogin began and
// signs its user in through auth.Modules.SignInWithoutPassword (the
// address's login limit, AfterLogin, the session cookie on v, the
// notices), for accounts with and without 2FA: a passkey is every factor
// at once. It returns the signed-in user. The ceremony is taken first:
// auth.ErrPasskeyChallengeInvalid for none; auth.ErrPasskeyInvalid for an
// assertion that does not verify or names no stored passkey;
// auth.ErrPasskeyCountRegressed as FinishTwoFactor; auth.ErrFeatureDisabled
// when passwordless sign-in is off.
func (h *Handler) FinishLogin(ctx context.Context, v *auth.Visit, in LoginInput) (u *user.User, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/login/finish", "finish login")
	defer done(&err)
	if !h.passwordless {
		return nil, auth.ErrFeatureDisabled
	}
	cer, err := h.take(ctx, v, purposePasswordless)
	if err != nil {
		return nil, err
	}
	return h.svc.Modules().SignInWithoutPassword(ctx, v, auth.PasswordlessInput{
		Method:   auth.LoginPasskey,
		Remember: in.Remember,
		Verify: func(ctx context.Context) (string, error) {
			parsed, err := parseAssertion(in.Assertion)
			if err != nil {
				return "", err
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
			return acct.u.ID, h.used(ctx, v, acct, cred, parsed)
		},
	})
}

// used records a verified assertion: the counter and the backup state, on
// the condition that the stored counter is still the one checked. A
// counter that did not go up (and is not zero on both sides) is audited
// and, with RefuseCounterRegression, refused.
func (h *Handler) used(ctx context.Context, v *auth.Visit, acct *account, cred *webauthn.Credential, parsed *protocol.ParsedCredentialAssertionData) error {
	p := acct.key(cred.ID)
	if p == nil {
		return auth.ErrPasskeyInvalid
	}
	got := parsed.Response.AuthenticatorData.Counter
	if cred.Authenticator.CloneWarning {
		refused := h.cfg.RefuseCounterRegression
		h.svc.Modules().Audit(ctx, v, auth.Event{Type: auth.EventPasskeyCountRegressed, UserID: acct.u.ID,
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

// registrant returns the visit's user when they may add a passkey: signed
// in, recently authenticated (auth.ErrReauthenticationRequired), and, when
// the Service verifies addresses (the email-verification feature), with
// the address verified (auth.ErrEmailNotVerified). An account whose
// address nobody proved may be an attacker's registration of someone
// else's address, waiting for its owner; a passkey added there would sign
// in as the owner once they take the account over by a reset.
func (h *Handler) registrant(ctx context.Context, v *auth.Visit) (*user.User, error) {
	u, err := h.svc.RecentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if h.svc.Enabled(auth.FeatureEmailVerification) && !u.EmailVerified() {
		return nil, auth.ErrEmailNotVerified
	}
	return u, nil
}

// stillValid checks, after p was stored, that the session that added it
// was not ended meanwhile: a password reset or logout-everywhere raises
// the session version and then deletes every passkey it lists, so a
// passkey stored after that list is caught here, where the raised version
// is seen, and deleted again (auth.ErrNotAuthenticated).
func (h *Handler) stillValid(ctx context.Context, u *user.User, p *user.Passkey) error {
	now, err := h.svc.Modules().Users().ByID(ctx, u.ID)
	if err == nil && now.SessionVersion == u.SessionVersion && now.PasswordChangedAt.Equal(u.PasswordChangedAt) {
		return nil
	}
	if err != nil && !errors.Is(err, user.ErrNotFound) {
		err = fmt.Errorf("passkeys: recheck the session: %w", err)
	} else {
		err = auth.ErrNotAuthenticated
	}
	if derr := h.store.DeletePasskey(ctx, u.ID, p.ID); derr != nil && !errors.Is(derr, user.ErrNotFound) {
		return fmt.Errorf("passkeys: delete a passkey of an ended session: %w", derr)
	}
	return err
}

func requireResident(r protocol.ResidentKeyRequirement) *bool {
	if r == protocol.ResidentKeyRequirementRequired {
		return protocol.ResidentKeyRequired()
	}
	return protocol.ResidentKeyNotRequired()
}

// cleanName is the name given at registration: auth.CheckPasskeyName's
// rule, with an empty name "Passkey".
func cleanName(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "Passkey", nil
	}
	return auth.CheckPasskeyName(name)
}

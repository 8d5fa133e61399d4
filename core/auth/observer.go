package auth

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Observer is told what a Service does, for metrics and traces
// (Config.Observer). The otelauth module implements it on OpenTelemetry;
// core imports no telemetry library.
//
// A Service calls an Observer in the request's goroutine, so its methods
// must be quick and safe for concurrent use. Nothing an Observer receives
// holds a password, a code, a token or a secret: routes by their pattern,
// store calls by their interface and method, events as [Event] (the user
// id, the address tried on a failed login, the client address).
//
// Why a hook in core rather than a wrapper around the user store: a
// wrapper would have to implement every optional part of the store
// contract a given store has (user.Passkeys, user.EmailCodes, ...), and
// the Service tells a store's parts by type assertion, so one wrapper type
// per combination would be needed. Core already holds the store split into
// its parts (bindUsers) and wraps each part it found; flows and events
// pass through core anyway. The limit, session and trusted-device stores
// are wrapped the same way in New, and a module's store through
// [Modules.ObserveOneTime]. With Config.Observer nil nothing is wrapped,
// and Handle and each typed method make one nil check
// (BenchmarkHandleMe).
type Observer interface {
	// StartFlow is called when a flow starts: a JSON route run by Handle
	// (f.Route is that route), or a typed method an app or a module called
	// directly (f.Route is the zero Route: the pages module's form posts,
	// an app's own handler). It returns the context the flow runs with
	// (its store calls and events get it, so a span started here is their
	// parent) and a function called exactly once when the flow ends, with
	// the status of its answer: the route's response status (a panic
	// included: 500), or for a typed method the status its JSON route
	// answers that outcome with (200 for success, AsError's Status for an
	// error). A flow a typed method runs inside another flow (a route
	// calling its typed method, VerifyTwoFactorEmailCode finishing through
	// FinishTwoFactor) is part of the outer one and not reported again.
	StartFlow(ctx context.Context, f Flow) (context.Context, func(status int))

	// StartStoreCall is called before each call a flow makes to one of the
	// Service's stores, with the part of the store contract called and the
	// method ("ByEmail"). It returns the context the call gets and a
	// function called once with the call's error when it returns: nil, an
	// expected outcome (user.ErrNotFound, user.ErrConflict,
	// user.ErrEmailTaken, onetime.ErrNotFound, ratelimit.ErrStoreFull) or a
	// failure. The parts, a fixed set (safe as metric attributes):
	//
	//   - Config.Users: the interface's name in core/user ("Accounts",
	//     "TwoFactor", "Passkeys", ...);
	//   - Config.LimitStore, and the default in-memory limit stores:
	//     "Limits" (Increment, Reset, Refund);
	//   - Config.Sessions: "Sessions", Config.TrustedDevices:
	//     "TrustedDevices" (the session.Store methods: Create, Get, Touch,
	//     Delete, List, DeleteAll; and CreateBounded of session.Bounded);
	//   - a module's store passed through [Modules.ObserveOneTime]: the
	//     part it names (the passkeys module's "Challenges": Put, Take).
	//
	// No key is passed: a limit's key holds an address, a session's id is a
	// credential.
	StartStoreCall(ctx context.Context, part, op string) (context.Context, func(err error))

	// Event receives every security event, as Config.Audit does (Audit
	// still receives them, or the log). A limit hit is EventRateLimited
	// with the limit's name in Detail; the second-factor events carry
	// Event.Factor.
	Event(ctx context.Context, e Event)
}

// Flow is a flow as an [Observer] is told of it.
type Flow struct {
	// Name is the flow's name, from a fixed set, so safe as a metric
	// attribute: Route.Flow of its JSON route ("login", "2fa/verify",
	// "sessions/delete"), the same whether the route or the typed method
	// runs it. A typed method without a route of its own is named in its
	// documentation ("2fa/pending" for PendingTwoFactorUser,
	// "reset-password/check" for CheckResetLink, "me/recent" for
	// RecentUser, "2fa/finish" for FinishTwoFactor, "login/passwordless"
	// for SignInWithoutPassword, "api-keys/delete-all" for
	// RevokeAllAPIKeys).
	Name string

	// Route is the JSON route that runs the flow; the zero Route when its
	// typed method was called directly.
	Route Route
}

// Flow is the route's flow name for metrics and traces: its pattern
// without the /api/ prefix, the auth/ segment and path parameters, so
// "/api/login" and "/api/auth/login" are both "login",
// "/api/2fa/verify" is "2fa/verify", "/api/auth/verify-email/{token}" is
// "verify-email". A route deleting a session is "sessions/delete" (the
// method is part of the name when two routes share a path), one creating
// an API key "api-keys/create" (beside the list, "api-keys"). The set is
// fixed by the route table, so it is safe as a metric attribute.
func (r Route) Flow() string {
	if r.flow != "" {
		return r.flow
	}
	p := strings.TrimPrefix(r.Pattern, "/api/")
	p = strings.TrimPrefix(p, "auth/")
	if i := strings.Index(p, "/{"); i >= 0 {
		p = p[:i]
	}
	if r.Method == "DELETE" {
		p += "/delete"
	}
	return p
}

// Observe reports a flow of a module's own typed method or route to
// Config.Observer (the passkeys module's ceremonies), as core's typed
// methods and routes report theirs: call it first, run the flow with the
// context it returns (pass it on to every typed method the flow calls),
// and call end once with the flow's error when it returns (nil for
// success). Inside a flow already (ctx is a flow's: a module's route
// calling its typed method, which calls core's) it starts nothing: it
// returns ctx and an end that does nothing, so every flow is reported
// once, by its outermost entry. Without an Observer it returns ctx and an
// end that does nothing. A nil ctx is the visit's request's.
func (m *Modules) Observe(ctx context.Context, v *Visit, f Flow) (_ context.Context, end func(err error)) {
	ctx, e := m.svc().startFlow(ctx, v, f)
	if e.done == nil {
		return ctx, endNothing
	}
	return ctx, func(err error) { e.end(&err) }
}

func endNothing(error) {}

// enter begins typed method name's flow (see Observe) and returns the
// context the flow runs with, which the method uses for every call it
// makes, and the flow's end, for a deferred call with the method's error:
//
//	ctx, flow := s.enter(ctx, v, "login")
//	defer flow.end(&err)
//
// Without an Observer it is a nil check of ctx and of the Observer, and
// allocates nothing (end is a static call, so err does not escape).
func (s *Service) enter(ctx context.Context, v *Visit, name string) (context.Context, flowEnd) {
	return s.startFlow(ctx, v, Flow{Name: name})
}

// startFlow starts flow f unless ctx is in a flow of s already or there is
// no Observer.
func (s *Service) startFlow(ctx context.Context, v *Visit, f Flow) (context.Context, flowEnd) {
	ctx = v.context(ctx)
	if s.cfg.Observer == nil || ctx.Value(flowKey{}) == s {
		return ctx, flowEnd{}
	}
	ctx, done := s.startObserved(ctx, f)
	return ctx, flowEnd{done}
}

// flowKey marks the context of a flow reported to an Observer; its value
// is the Service, so that a flow of another Service is still reported.
type flowKey struct{}

// startObserved tells the Observer that flow f starts and returns the
// flow's context, marked as in a flow so that the typed methods it calls
// are part of it.
func (s *Service) startObserved(ctx context.Context, f Flow) (context.Context, func(status int)) {
	ctx, done := s.cfg.Observer.StartFlow(ctx, f)
	return context.WithValue(ctx, flowKey{}, s), done
}

// flowEnd ends a flow startFlow started; its zero value ends nothing.
type flowEnd struct {
	done func(status int)
}

// end ends the flow with the error *errp (nil errp: success).
func (e flowEnd) end(errp *error) {
	if e.done == nil {
		return
	}
	var err error
	if errp != nil {
		err = *errp
	}
	e.done(statusOf(err))
}

// statusOf is the status a JSON route answers err with: the status a
// typed method's flow ends with for an Observer.
func statusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	return AsError(err).Status
}

// observe runs one store call under o.
func observe[T any](o Observer, ctx context.Context, part, op string, call func(context.Context) (T, error)) (T, error) {
	ctx, end := o.StartStoreCall(ctx, part, op)
	t, err := call(ctx)
	end(err)
	return t, err
}

// observe0 runs one store call that returns only an error under o.
func observe0(o Observer, ctx context.Context, part, op string, call func(context.Context) error) error {
	ctx, end := o.StartStoreCall(ctx, part, op)
	err := call(ctx)
	end(err)
	return err
}

// observed wraps every part the store has (a nil part stays nil, so the
// flows still tell a missing part) with one that reports its calls to o.
func (s userStore) observed(o Observer) userStore {
	w := s
	w.Accounts = obsAccounts{s.Accounts, o}
	if s.registration != nil {
		w.registration = obsRegistration{s.registration, o}
	}
	if s.verification != nil {
		w.verification = obsVerification{s.verification, o}
	}
	if s.emailChange != nil {
		w.emailChange = obsEmailChange{s.emailChange, o}
	}
	if s.reset != nil {
		w.reset = obsReset{s.reset, o}
	}
	if s.change != nil {
		w.change = obsChange{s.change, o}
	}
	if s.rehash != nil {
		w.rehash = obsRehash{s.rehash, o}
	}
	if s.twoFactor != nil {
		w.twoFactor = obsTwoFactor{s.twoFactor, o}
	}
	if s.lockout != nil {
		w.lockout = obsLockout{s.lockout, o}
	}
	if s.versions != nil {
		w.versions = obsVersions{s.versions, o}
	}
	if s.passkeys != nil {
		w.passkeys = obsPasskeys{s.passkeys, o}
	}
	if s.emailCodes != nil {
		w.emailCodes = obsEmailCodes{s.emailCodes, o}
	}
	if s.signIns != nil {
		w.signIns = obsSignIns{s.signIns, o}
	}
	if s.apiKeys != nil {
		w.apiKeys = obsAPIKeys{s.apiKeys, o}
	}
	return w
}

type obsAPIKeys struct {
	p user.APIKeys
	o Observer
}

func (w obsAPIKeys) CreateAPIKey(ctx context.Context, k *user.APIKey, max int) error {
	return observe0(w.o, ctx, "APIKeys", "CreateAPIKey", func(ctx context.Context) error { return w.p.CreateAPIKey(ctx, k, max) })
}

func (w obsAPIKeys) APIKeyByID(ctx context.Context, id string) (*user.APIKey, error) {
	return observe(w.o, ctx, "APIKeys", "APIKeyByID", func(ctx context.Context) (*user.APIKey, error) { return w.p.APIKeyByID(ctx, id) })
}

func (w obsAPIKeys) ListAPIKeys(ctx context.Context, userID string) ([]*user.APIKey, error) {
	return observe(w.o, ctx, "APIKeys", "ListAPIKeys", func(ctx context.Context) ([]*user.APIKey, error) { return w.p.ListAPIKeys(ctx, userID) })
}

func (w obsAPIKeys) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	return observe0(w.o, ctx, "APIKeys", "TouchAPIKey", func(ctx context.Context) error { return w.p.TouchAPIKey(ctx, id, at) })
}

func (w obsAPIKeys) RevokeAPIKey(ctx context.Context, userID, id string) error {
	return observe0(w.o, ctx, "APIKeys", "RevokeAPIKey", func(ctx context.Context) error { return w.p.RevokeAPIKey(ctx, userID, id) })
}

func (w obsAPIKeys) RevokeAPIKeys(ctx context.Context, userID string) (int, error) {
	return observe(w.o, ctx, "APIKeys", "RevokeAPIKeys", func(ctx context.Context) (int, error) { return w.p.RevokeAPIKeys(ctx, userID) })
}

type obsSignIns struct {
	p user.SignIns
	o Observer
}

func (w obsSignIns) MarkSignedIn(ctx context.Context, id string, at time.Time) (bool, error) {
	return observe(w.o, ctx, "SignIns", "MarkSignedIn", func(ctx context.Context) (bool, error) { return w.p.MarkSignedIn(ctx, id, at) })
}

type obsAccounts struct {
	p user.Accounts
	o Observer
}

func (w obsAccounts) ByID(ctx context.Context, id string) (*user.User, error) {
	return observe(w.o, ctx, "Accounts", "ByID", func(ctx context.Context) (*user.User, error) { return w.p.ByID(ctx, id) })
}

func (w obsAccounts) ByEmail(ctx context.Context, email string) (*user.User, error) {
	return observe(w.o, ctx, "Accounts", "ByEmail", func(ctx context.Context) (*user.User, error) { return w.p.ByEmail(ctx, email) })
}

type obsRegistration struct {
	p user.Registration
	o Observer
}

func (w obsRegistration) Create(ctx context.Context, u *user.User) (*user.User, error) {
	return observe(w.o, ctx, "Registration", "Create", func(ctx context.Context) (*user.User, error) { return w.p.Create(ctx, u) })
}

func (w obsRegistration) Delete(ctx context.Context, id string) error {
	return observe0(w.o, ctx, "Registration", "Delete", func(ctx context.Context) error { return w.p.Delete(ctx, id) })
}

type obsVerification struct {
	p user.EmailVerification
	o Observer
}

func (w obsVerification) VerifyEmail(ctx context.Context, id, email string, at time.Time) error {
	return observe0(w.o, ctx, "EmailVerification", "VerifyEmail", func(ctx context.Context) error { return w.p.VerifyEmail(ctx, id, email, at) })
}

type obsEmailChange struct {
	p user.EmailChange
	o Observer
}

func (w obsEmailChange) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	return observe0(w.o, ctx, "EmailChange", "ChangeEmail", func(ctx context.Context) error { return w.p.ChangeEmail(ctx, id, oldEmail, newEmail, at) })
}

type obsReset struct {
	p user.PasswordReset
	o Observer
}

func (w obsReset) ResetPassword(ctx context.Context, id string, r user.Reset) error {
	return observe0(w.o, ctx, "PasswordReset", "ResetPassword", func(ctx context.Context) error { return w.p.ResetPassword(ctx, id, r) })
}

type obsChange struct {
	p user.PasswordChange
	o Observer
}

func (w obsChange) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	return observe0(w.o, ctx, "PasswordChange", "ChangePassword", func(ctx context.Context) error { return w.p.ChangePassword(ctx, id, oldHash, newHash, at) })
}

type obsRehash struct {
	p user.PasswordRehash
	o Observer
}

func (w obsRehash) RehashPassword(ctx context.Context, id, oldHash, newHash string) error {
	return observe0(w.o, ctx, "PasswordRehash", "RehashPassword", func(ctx context.Context) error { return w.p.RehashPassword(ctx, id, oldHash, newHash) })
}

type obsTwoFactor struct {
	p user.TwoFactor
	o Observer
}

func (w obsTwoFactor) BeginTOTPSetup(ctx context.Context, id, pendingSecret string) error {
	return observe0(w.o, ctx, "TwoFactor", "BeginTOTPSetup", func(ctx context.Context) error { return w.p.BeginTOTPSetup(ctx, id, pendingSecret) })
}

func (w obsTwoFactor) EnableTOTP(ctx context.Context, id string, e user.EnableTOTP) error {
	return observe0(w.o, ctx, "TwoFactor", "EnableTOTP", func(ctx context.Context) error { return w.p.EnableTOTP(ctx, id, e) })
}

func (w obsTwoFactor) AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error {
	return observe0(w.o, ctx, "TwoFactor", "AcceptTOTPStep", func(ctx context.Context) error { return w.p.AcceptTOTPStep(ctx, id, matched, current) })
}

func (w obsTwoFactor) ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error {
	return observe0(w.o, ctx, "TwoFactor", "ConsumeRecoveryCode", func(ctx context.Context) error { return w.p.ConsumeRecoveryCode(ctx, id, old, remaining) })
}

func (w obsTwoFactor) ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error {
	return observe0(w.o, ctx, "TwoFactor", "ReplaceRecoveryCodes", func(ctx context.Context) error { return w.p.ReplaceRecoveryCodes(ctx, id, hashes) })
}

func (w obsTwoFactor) DisableTOTP(ctx context.Context, id string) error {
	return observe0(w.o, ctx, "TwoFactor", "DisableTOTP", func(ctx context.Context) error { return w.p.DisableTOTP(ctx, id) })
}

type obsLockout struct {
	p user.Lockout
	o Observer
}

func (w obsLockout) RecordLoginFailure(ctx context.Context, id string, max int, lockFor time.Duration, at time.Time) (int, time.Time, error) {
	ctx, end := w.o.StartStoreCall(ctx, "Lockout", "RecordLoginFailure")
	n, until, err := w.p.RecordLoginFailure(ctx, id, max, lockFor, at)
	end(err)
	return n, until, err
}

func (w obsLockout) ClearLoginFailures(ctx context.Context, id string) error {
	return observe0(w.o, ctx, "Lockout", "ClearLoginFailures", func(ctx context.Context) error { return w.p.ClearLoginFailures(ctx, id) })
}

type obsVersions struct {
	p user.SessionVersions
	o Observer
}

func (w obsVersions) BumpSessionVersion(ctx context.Context, id string) (int64, error) {
	return observe(w.o, ctx, "SessionVersions", "BumpSessionVersion", func(ctx context.Context) (int64, error) { return w.p.BumpSessionVersion(ctx, id) })
}

type obsPasskeys struct {
	p user.Passkeys
	o Observer
}

func (w obsPasskeys) PasskeyUserHandle(ctx context.Context, id string, candidate []byte) ([]byte, error) {
	return observe(w.o, ctx, "Passkeys", "PasskeyUserHandle", func(ctx context.Context) ([]byte, error) { return w.p.PasskeyUserHandle(ctx, id, candidate) })
}

func (w obsPasskeys) ByPasskeyUserHandle(ctx context.Context, handle []byte) (*user.User, error) {
	return observe(w.o, ctx, "Passkeys", "ByPasskeyUserHandle", func(ctx context.Context) (*user.User, error) { return w.p.ByPasskeyUserHandle(ctx, handle) })
}

func (w obsPasskeys) AddPasskey(ctx context.Context, p *user.Passkey) error {
	return observe0(w.o, ctx, "Passkeys", "AddPasskey", func(ctx context.Context) error { return w.p.AddPasskey(ctx, p) })
}

func (w obsPasskeys) ListPasskeys(ctx context.Context, userID string) ([]*user.Passkey, error) {
	return observe(w.o, ctx, "Passkeys", "ListPasskeys", func(ctx context.Context) ([]*user.Passkey, error) { return w.p.ListPasskeys(ctx, userID) })
}

func (w obsPasskeys) PasskeyByID(ctx context.Context, credentialID []byte) (*user.Passkey, error) {
	return observe(w.o, ctx, "Passkeys", "PasskeyByID", func(ctx context.Context) (*user.Passkey, error) { return w.p.PasskeyByID(ctx, credentialID) })
}

func (w obsPasskeys) RenamePasskey(ctx context.Context, userID string, credentialID []byte, name string) error {
	return observe0(w.o, ctx, "Passkeys", "RenamePasskey", func(ctx context.Context) error { return w.p.RenamePasskey(ctx, userID, credentialID, name) })
}

func (w obsPasskeys) DeletePasskey(ctx context.Context, userID string, credentialID []byte) error {
	return observe0(w.o, ctx, "Passkeys", "DeletePasskey", func(ctx context.Context) error { return w.p.DeletePasskey(ctx, userID, credentialID) })
}

func (w obsPasskeys) UsePasskey(ctx context.Context, userID string, credentialID []byte, u user.PasskeyUse) error {
	return observe0(w.o, ctx, "Passkeys", "UsePasskey", func(ctx context.Context) error { return w.p.UsePasskey(ctx, userID, credentialID, u) })
}

type obsEmailCodes struct {
	p user.EmailCodes
	o Observer
}

func (w obsEmailCodes) PutEmailCode(ctx context.Context, c user.EmailCode) error {
	return observe0(w.o, ctx, "EmailCodes", "PutEmailCode", func(ctx context.Context) error { return w.p.PutEmailCode(ctx, c) })
}

func (w obsEmailCodes) EmailCode(ctx context.Context, userID string) (user.EmailCode, error) {
	return observe(w.o, ctx, "EmailCodes", "EmailCode", func(ctx context.Context) (user.EmailCode, error) { return w.p.EmailCode(ctx, userID) })
}

func (w obsEmailCodes) TakeEmailCode(ctx context.Context, userID string, hash []byte, now time.Time) error {
	return observe0(w.o, ctx, "EmailCodes", "TakeEmailCode", func(ctx context.Context) error { return w.p.TakeEmailCode(ctx, userID, hash, now) })
}

// observedLimits wraps a limit's store for o, keeping its optional
// ratelimit.Refunder: a store without one stays without one, so the
// limiter still tells.
func observedLimits(st ratelimit.Store, o Observer) ratelimit.Store {
	w := obsLimits{st, o}
	if r, ok := st.(ratelimit.Refunder); ok {
		return obsRefundLimits{w, r}
	}
	return w
}

type obsLimits struct {
	p ratelimit.Store
	o Observer
}

func (w obsLimits) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	ctx, end := w.o.StartStoreCall(ctx, "Limits", "Increment")
	n, at, err := w.p.Increment(ctx, key, window)
	end(err)
	return n, at, err
}

func (w obsLimits) Reset(ctx context.Context, key string) error {
	return observe0(w.o, ctx, "Limits", "Reset", func(ctx context.Context) error { return w.p.Reset(ctx, key) })
}

type obsRefundLimits struct {
	obsLimits
	r ratelimit.Refunder
}

func (w obsRefundLimits) Refund(ctx context.Context, key string, resetAt time.Time) error {
	return observe0(w.o, ctx, "Limits", "Refund", func(ctx context.Context) error { return w.r.Refund(ctx, key, resetAt) })
}

// observedRecords wraps a session.Store (Config.Sessions, as part
// "Sessions", or Config.TrustedDevices, as "TrustedDevices") for o; nil
// stays nil.
func observedRecords(st session.Store, part string, o Observer) session.Store {
	if st == nil {
		return nil
	}
	if _, ok := st.(session.Bounded); ok {
		return obsBoundedRecords{obsRecords{st, part, o}}
	}
	return obsRecords{st, part, o}
}

// obsBoundedRecords is obsRecords of a store with the session.Bounded
// part, which it keeps.
type obsBoundedRecords struct{ obsRecords }

func (w obsBoundedRecords) CreateBounded(ctx context.Context, r session.Record, max int) error {
	return observe0(w.o, ctx, w.part, "CreateBounded", func(ctx context.Context) error {
		return w.p.(session.Bounded).CreateBounded(ctx, r, max)
	})
}

type obsRecords struct {
	p    session.Store
	part string
	o    Observer
}

func (w obsRecords) Create(ctx context.Context, r session.Record) error {
	return observe0(w.o, ctx, w.part, "Create", func(ctx context.Context) error { return w.p.Create(ctx, r) })
}

func (w obsRecords) Get(ctx context.Context, id string) (session.Record, error) {
	return observe(w.o, ctx, w.part, "Get", func(ctx context.Context) (session.Record, error) { return w.p.Get(ctx, id) })
}

func (w obsRecords) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	return observe0(w.o, ctx, w.part, "Touch", func(ctx context.Context) error { return w.p.Touch(ctx, id, seen, expires) })
}

func (w obsRecords) Delete(ctx context.Context, userID, id string) error {
	return observe0(w.o, ctx, w.part, "Delete", func(ctx context.Context) error { return w.p.Delete(ctx, userID, id) })
}

func (w obsRecords) List(ctx context.Context, userID string) ([]session.Record, error) {
	return observe(w.o, ctx, w.part, "List", func(ctx context.Context) ([]session.Record, error) { return w.p.List(ctx, userID) })
}

func (w obsRecords) DeleteAll(ctx context.Context, userID, except string) error {
	return observe0(w.o, ctx, w.part, "DeleteAll", func(ctx context.Context) error { return w.p.DeleteAll(ctx, userID, except) })
}

// ObserveOneTime returns st with its calls reported to Config.Observer
// under part (the passkeys module passes its challenge store as
// "Challenges"), for a module whose flows keep state in a store of their
// own. Name the part for the store's role, from a fixed set: it is a
// metric attribute. Without an Observer, or for a nil st, it returns st.
func (m *Modules) ObserveOneTime(part string, st onetime.Store) onetime.Store {
	s := m.svc()
	if s.cfg.Observer == nil || st == nil {
		return st
	}
	return obsOneTime{st, part, s.cfg.Observer}
}

type obsOneTime struct {
	p    onetime.Store
	part string
	o    Observer
}

func (w obsOneTime) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	return observe0(w.o, ctx, w.part, "Put", func(ctx context.Context) error { return w.p.Put(ctx, key, data, expires) })
}

func (w obsOneTime) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	return observe(w.o, ctx, w.part, "Take", func(ctx context.Context) ([]byte, error) { return w.p.Take(ctx, key, now) })
}

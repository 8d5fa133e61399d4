package authtest

import (
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

// PartsHarness is what RunParts needs: a framework to serve through and a
// user store that implements only some parts of the contract (core/user),
// as an app's own store often does.
type PartsHarness struct {
	// Start serves svc as Harness.Start does. Required.
	Start func(t *testing.T, svc *auth.Service) string

	// NewStore returns a fresh, empty store for one test: user.Accounts
	// and whichever other parts it implements. Required.
	NewStore func(t *testing.T) user.Accounts

	// Seed puts a user in the store the app's way, for a store without
	// user.Registration (storetest.Seed; the same function the store's
	// conformance suite takes). Required then; ignored otherwise.
	Seed storetest.Seed
}

// RunParts runs the topic of the flow suite that any store can hold, on
// exactly the parts h.NewStore's store implements: the Service is built
// with every feature whose part is missing switched off (Config.Disable,
// Config.Lockout), as an app on such a store configures it. Signing in and
// out runs always; the switched-off features' routes must answer 404 and
// change nothing; two-factor authentication runs when the store implements
// user.TwoFactor, logout everywhere when it implements
// user.SessionVersions. Run runs the same topic on a view of
// Harness.NewUsers's store with three parts (Accounts, TwoFactor,
// SessionVersions).
func RunParts(t *testing.T, h PartsHarness) {
	if h.Start == nil || h.NewStore == nil {
		t.Fatal("authtest: PartsHarness.Start and PartsHarness.NewStore are required")
	}
	s := suite{h: Harness{Start: h.Start}, parts: &h}
	t.Run("StoreOfSomeParts", s.topic(partsTests))
}

// partsTests is the topic of RunParts, also run by Run.
var partsTests = []test{
	{"signing in and out", suite.partsSignInOut},
	{"the features of missing parts answer 404 and change nothing", suite.partsFeaturesOff},
	{"two-factor authentication with user.TwoFactor", suite.partsTwoFactor},
	{"logout everywhere with user.SessionVersions", suite.partsLogoutEverywhere},
}

// threeParts is the view of a whole store that Run gives the topic: an
// app that creates accounts itself and uses TOTP and logout everywhere.
type threeParts struct {
	user.Accounts
	user.TwoFactor
	user.SessionVersions
}

// partsEnv is env on a store of some parts: RunParts's store, or in Run a
// threeParts view of Harness.NewUsers's, whose users are made with the
// whole store's Create as an app's own insert would make them.
func (s suite) partsEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, h: s.h, clock: clock.New(start), mail: &mail.Capture{}, audit: &AuditLog{}}
	if s.parts != nil {
		e.accounts, e.seedFn = s.parts.NewStore(t), s.parts.Seed
	} else {
		whole := s.h.NewUsers(t)
		e.accounts = threeParts{whole, whole, whole}
		e.seedFn = func(t *testing.T, _ user.Accounts, u *user.User) *user.User {
			t.Helper()
			created, err := whole.Create(t.Context(), u)
			if err != nil {
				t.Fatalf("seed %s: %v", u.Email, err)
			}
			return created
		}
	}
	if _, ok := e.accounts.(user.Registration); !ok && e.seedFn == nil {
		t.Fatalf("authtest: the store (%T) has no user.Registration and PartsHarness.Seed is nil: the suite cannot make its users", e.accounts)
	}
	cfg := baseConfig(t, e.accounts, e.mail, e.clock.Now)
	cfg.Audit = e.audit.Record
	if s.h.FastHashing {
		cfg.Hasher, cfg.RecoveryHasher = dualHasher{}, dualHasher{}
	}
	cfg.Disable = missingFeatures(e.accounts)
	if _, ok := e.accounts.(user.Lockout); !ok {
		cfg.Lockout = auth.LockoutOff
	}
	e.start(t, s, cfg, nil)
	return e
}

// missingFeatures is Config.Disable for a store: every feature whose part
// the store lacks (the table of ARCHITECTURE.md, "Stores").
func missingFeatures(users user.Accounts) []auth.Feature {
	var off []auth.Feature
	for _, f := range []struct {
		has     bool
		feature auth.Feature
	}{
		{implements[user.Registration](users), auth.FeatureRegistration},
		{implements[user.EmailVerification](users), auth.FeatureEmailVerification},
		{implements[user.SessionVersions](users), auth.FeatureLogoutEverywhere},
		{implements[user.EmailChange](users), auth.FeatureEmailChange},
		{implements[user.PasswordReset](users), auth.FeaturePasswordReset},
		{implements[user.PasswordChange](users), auth.FeaturePasswordChange},
		{implements[user.TwoFactor](users), auth.FeatureTwoFactor},
	} {
		if !f.has {
			off = append(off, f.feature)
		}
	}
	return off
}

func implements[P any](users user.Accounts) bool {
	_, ok := users.(P)
	return ok
}

// needPart skips a test of a part the env's store lacks.
func needPart[P any](t *testing.T, e *env, name string) {
	t.Helper()
	if !implements[P](e.accounts) {
		t.Skipf("the store (%T) does not implement user.%s", e.accounts, name)
	}
}

func (s suite) partsSignInOut(t *testing.T) {
	e := s.partsEnv(t)
	u := e.seed(t, "ada@example.com")
	mustStatus(t, e.client().login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	c := e.loggedIn(t, "ada@example.com")
	mustBeSignedIn(t, c, "ada@example.com")
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	mustBeSignedOut(t, c)
	if got := e.byID(t, u.ID); got.Email != "ada@example.com" || got.PasswordHash != u.PasswordHash {
		t.Errorf("store: signing in and out changed the account: %+v", got)
	}
}

func (s suite) partsFeaturesOff(t *testing.T) {
	e := s.partsEnv(t)
	u := e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	mailed := e.mailCount(t) // a new-sign-in notice, on a store without user.SignIns
	routes := map[auth.Feature][]string{
		auth.FeatureRegistration:      {"/api/auth/register"},
		auth.FeatureEmailVerification: {"/api/auth/resend-verification"},
		auth.FeatureLogoutEverywhere:  {"/api/auth/logout-all"},
		auth.FeatureEmailChange:       {"/api/auth/change-email"},
		auth.FeaturePasswordReset:     {"/api/auth/forgot-password", "/api/auth/reset-password/sometoken"},
		auth.FeaturePasswordChange:    {"/api/auth/change-password"},
		auth.FeatureTwoFactor:         {"/api/2fa/setup", "/api/2fa/confirm", "/api/2fa/regenerate-codes"},
	}
	off := missingFeatures(e.accounts)
	if len(off) == 0 {
		t.Skip("the store implements every part: no feature is off")
	}
	for _, f := range off {
		for _, path := range routes[f] {
			mustBeAbsent(t, c, http.MethodPost, path, everyFieldBody(), string(f)+" is off: its part is missing")
		}
	}
	e.noUser(t, "bob@example.com")
	if got := e.byID(t, u.ID); got.Email != "ada@example.com" || got.PasswordHash != u.PasswordHash || got.PendingTOTPSecret != "" {
		t.Errorf("store: a switched-off route changed the account: %+v", got)
	}
	if n := e.mailCount(t) - mailed; n != 0 {
		t.Errorf("%d mails sent by switched-off routes, want none", n)
	}
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) partsTwoFactor(t *testing.T) {
	e := s.partsEnv(t)
	needPart[user.TwoFactor](t, e, "TwoFactor")
	u := e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	secret, codes := e.enable2FA(t, c)
	if len(codes) != 8 {
		t.Fatalf("%d recovery codes, want 8", len(codes))
	}
	if got := e.byID(t, u.ID); !got.TwoFactorEnabled || len(got.RecoveryCodeHashes) != 8 {
		t.Errorf("store: TwoFactorEnabled %v with %d recovery codes, want on with 8", got.TwoFactorEnabled, len(got.RecoveryCodeHashes))
	}
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	e.loginWith2FA(t, c, "ada@example.com", secret)
	// A recovery code is the other way through the second step.
	other := e.client()
	pendingLogin(t, other, "ada@example.com")
	mustBody(t, other.recover(codes[0]), obj{"success": true, "remainingCodes": 7})
	mustBeSignedIn(t, other, "ada@example.com")
	if got := e.byID(t, u.ID); len(got.RecoveryCodeHashes) != 7 {
		t.Errorf("store: %d recovery codes left, want 7", len(got.RecoveryCodeHashes))
	}
}

func (s suite) partsLogoutEverywhere(t *testing.T) {
	e := s.partsEnv(t)
	needPart[user.SessionVersions](t, e, "SessionVersions")
	u := e.seed(t, "ada@example.com")
	a, b := e.loggedIn(t, "ada@example.com"), e.loggedIn(t, "ada@example.com")
	version := e.byID(t, u.ID).SessionVersion
	mustMessage(t, a.post("/api/auth/logout-all", nil), msgLoggedOutAll)
	mustBeSignedOut(t, a)
	mustBeSignedOut(t, b)
	if got := e.byID(t, u.ID).SessionVersion; got <= version {
		t.Errorf("store: sessionVersion %d, want above %d", got, version)
	}
	mustLogin(t, a, "ada@example.com", goodPassword)
	mustBeSignedIn(t, a, "ada@example.com")
}

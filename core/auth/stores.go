package auth

import (
	"errors"
	"fmt"

	"github.com/authkit-go/authkit/core/user"
)

// userStore is Config.Users split into the parts of the store contract the
// flows call (core/user). A part is nil when the store does not implement
// it; New has checked that every enabled feature has the parts it needs.
type userStore struct {
	user.Accounts
	registration user.Registration
	verification user.EmailVerification
	emailChange  user.EmailChange
	reset        user.PasswordReset
	change       user.PasswordChange
	rehash       user.PasswordRehash // optional: without it, old hashes are never upgraded
	twoFactor    user.TwoFactor
	lockout      user.Lockout
	versions     user.SessionVersions
	passkeys     user.Passkeys   // optional: without it, the passkey management methods are off
	emailCodes   user.EmailCodes // Config.EmailCode, Config.EmailSignIn
	signIns      user.SignIns    // optional: without it, an account's first sign-in under authkit mails the new-device notice
	apiKeys      user.APIKeys    // Config.APIKeys
}

// errNoTwoFactor fails the second step of a login, and 2FA disable, when
// the store does not implement user.TwoFactor: an account it reports with
// 2FA on is a broken store, and the flows fail closed (500) rather than
// skip a factor.
var errNoTwoFactor = errors.New("auth: Config.Users does not implement user.TwoFactor, so no account can have 2FA on")

// bindUsers splits the store into its parts and refuses a configuration
// that turns on a feature the store cannot hold, naming every missing
// interface (one line each, so that an adopter fixes them all at once) and
// the way out.
func bindUsers(cfg *Config) (userStore, error) {
	var missing []error
	s := userStore{Accounts: cfg.Users}
	s.rehash, _ = cfg.Users.(user.PasswordRehash)
	s.passkeys, _ = cfg.Users.(user.Passkeys)
	s.signIns, _ = cfg.Users.(user.SignIns)
	for _, p := range []struct {
		bind     func() bool // takes the part from the store; false when it lacks it
		name     string      // the interface
		needed   bool        // whether this configuration calls it
		neededBy string      // what calls it
		instead  string      // the way out other than implementing it
	}{
		{bindPart(cfg.Users, &s.verification), "user.EmailVerification", cfg.featureOn(FeatureEmailVerification), "email verification", "add auth.FeatureEmailVerification to Config.Disable (the app verifies addresses itself)"},
		{bindPart(cfg.Users, &s.versions), "user.SessionVersions", cfg.featureOn(FeatureLogoutEverywhere), "logout everywhere", "add auth.FeatureLogoutEverywhere to Config.Disable"},
		{bindPart(cfg.Users, &s.registration), "user.Registration", cfg.featureOn(FeatureRegistration), "public registration", "add auth.FeatureRegistration to Config.Disable"},
		{bindPart(cfg.Users, &s.emailChange), "user.EmailChange", cfg.featureOn(FeatureEmailChange), "email change", "add auth.FeatureEmailChange to Config.Disable"},
		{bindPart(cfg.Users, &s.reset), "user.PasswordReset", cfg.featureOn(FeaturePasswordReset), "password reset", "add auth.FeaturePasswordReset to Config.Disable"},
		{bindPart(cfg.Users, &s.change), "user.PasswordChange", cfg.featureOn(FeaturePasswordChange), "password change", "add auth.FeaturePasswordChange to Config.Disable"},
		{bindPart(cfg.Users, &s.twoFactor), "user.TwoFactor", cfg.featureOn(FeatureTwoFactor), "two-factor authentication", "add auth.FeatureTwoFactor to Config.Disable"},
		{bindPart(cfg.Users, &s.emailCodes), "user.EmailCodes", cfg.EmailCode.Enabled, "email codes (Config.EmailCode)", "leave Config.EmailCode.Enabled false"},
		{bindPart(cfg.Users, &s.emailCodes), "user.EmailCodes", cfg.EmailSignIn.Enabled, "sign-in by email (Config.EmailSignIn)", "leave Config.EmailSignIn.Enabled false"},
		{bindPart(cfg.Users, &s.lockout), "user.Lockout", cfg.Lockout.Max > 0, "the account lock-out (Config.Lockout)", "set Config.Lockout to auth.LockoutOff"},
		{bindPart(cfg.Users, &s.apiKeys), "user.APIKeys", cfg.APIKeys.Enabled, "personal API keys (Config.APIKeys)", "leave Config.APIKeys.Enabled false"},
	} {
		if p.bind() || !p.needed {
			continue
		}
		msg := fmt.Sprintf("auth: Config.Users (%T) does not implement %s, which %s needs: implement it", cfg.Users, p.name, p.neededBy)
		if p.instead != "" {
			msg += ", or " + p.instead
		}
		missing = append(missing, errors.New(msg))
	}
	if len(missing) > 0 {
		return userStore{}, errors.Join(missing...)
	}
	if cfg.Observer != nil {
		s = s.observed(cfg.Observer)
	}
	return s, nil
}

// bindPart returns a function that sets *dst to the store's implementation
// of part P and reports whether it has one.
func bindPart[P any](users user.Accounts, dst *P) func() bool {
	return func() bool {
		p, ok := users.(P)
		if ok {
			*dst = p
		}
		return ok
	}
}

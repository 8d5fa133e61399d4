// Package user defines the account record that every authkit store persists
// and every flow reads.
//
// It is a leaf package: it imports only the standard library, so stores,
// flows and framework modules can all depend on it without cycles.
//
// The record holds secrets (the password hash, the encrypted TOTP secrets,
// the recovery-code hashes). Those fields are tagged `json:"-"` so that a
// User accidentally passed to an encoder leaks nothing; an app that wants to
// show the current user uses [User.Public], which copies only what is safe to
// send to the account's owner.
//
// Nullable spec fields are rendered with Go zero values: an empty string is
// null for the secrets, a zero [time.Time] is null for the timestamps, nil is
// null for RecoveryCodeHashes, and 0 is null for LastTOTPStep (step 0 is the
// thirty seconds after the Unix epoch, which no real code is ever issued for).
// Stores map these zero values to SQL NULL and back.
//
// The store contract is split by feature into small interfaces: [Accounts]
// (every store), [Registration], [EmailVerification], [EmailChange],
// [PasswordReset], [PasswordChange], [PasswordRehash], [TwoFactor],
// [Lockout] and [SessionVersions]; [Passkeys], [EmailCodes] (the mailed
// second-factor codes of auth.Config.EmailCode), [SignIns] (which
// accounts signed in under authkit) and [APIKeys] (personal API keys,
// auth.Config.APIKeys) stand outside [Store]. Each says what its methods change, the
// condition under which they apply atomically, and the sentinel errors they
// return, wrapped. A store implements the parts its app uses; [Store] is all
// of them, as core/store's memory store and adapters/sqlxstore implement
// them, and core/store/storetest proves an implementation part by part.
// The smallest store is [Accounts] alone, with every feature that needs
// another part switched off in auth.Config.Disable (the verification of
// addresses, "email-verification", included) and the lock-out off;
// ARCHITECTURE.md, "Stores", has the table of which part each feature
// needs, and auth.New names every part a configuration lacks.
//
//	u, err := users.ByEmail(ctx, email)
//	switch {
//	case errors.Is(err, user.ErrNotFound):
//		return ... // no such account
//	case errors.Is(err, user.ErrUnavailable):
//		return ... // the backend is down: answer 503
//	case err != nil:
//		return err
//	}
//	json.NewEncoder(w).Encode(u.Public()) // never u itself
package user

package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// racers is how many goroutines race each conditional operation.
const racers = 50

// base is the fixed instant the suite's timestamps are built from; it has
// sub-millisecond digits so that precision loss shows.
var base = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// parts is a store split into the parts of the contract (core/user), as
// one value whose methods are the parts' methods. A part the store lacks is
// nil, and no test that calls it runs.
type parts struct {
	user.Accounts
	user.Registration
	user.EmailVerification
	user.EmailChange
	user.PasswordReset
	user.PasswordChange
	user.PasswordRehash
	user.TwoFactor
	user.Lockout
	user.SessionVersions
	user.Passkeys
	user.EmailCodes
	user.EmailCodeEraser
	user.Identities
	user.SignIns
	user.AccountDeleter
	user.APIKeys

	seed Seed // how users are made without Registration; nil: Create
}

func split(s user.Accounts) *parts {
	p := &parts{Accounts: s}
	p.Registration, _ = s.(user.Registration)
	p.EmailVerification, _ = s.(user.EmailVerification)
	p.EmailChange, _ = s.(user.EmailChange)
	p.PasswordReset, _ = s.(user.PasswordReset)
	p.PasswordChange, _ = s.(user.PasswordChange)
	p.PasswordRehash, _ = s.(user.PasswordRehash)
	p.TwoFactor, _ = s.(user.TwoFactor)
	p.Lockout, _ = s.(user.Lockout)
	p.SessionVersions, _ = s.(user.SessionVersions)
	p.Passkeys, _ = s.(user.Passkeys)
	p.EmailCodes, _ = s.(user.EmailCodes)
	p.EmailCodeEraser, _ = s.(user.EmailCodeEraser)
	p.Identities, _ = s.(user.Identities)
	p.SignIns, _ = s.(user.SignIns)
	p.AccountDeleter, _ = s.(user.AccountDeleter)
	p.APIKeys, _ = s.(user.APIKeys)
	return p
}

// test is one test of a part.
type test struct {
	name string
	fn   func(t *testing.T, s *parts)
}

// suite is every part of the contract, with its tests, in the order
// RunUserStore runs them.
var suite = []struct {
	part  string              // the interface, for the subtest's name and the skip
	has   func(p *parts) bool // whether a store implements it
	tests []test
}{
	{"Accounts", func(p *parts) bool { return true }, []test{
		{"SeedAndRead", testSeedAndRead},
		{"EmailsAreBytes", testEmailBytes},
		{"NotFound", testNotFound},
	}},
	{"Registration", func(p *parts) bool { return p.Registration != nil }, []test{
		{"CreateAndRead", testCreateAndRead},
		{"CreateAssignsDistinctIDs", testCreateIDs},
		{"CreateDuplicateEmail", testCreateDuplicate},
		{"CreateRace", testCreateRace},
		{"Delete", testDelete},
	}},
	{"TwoFactor", func(p *parts) bool { return p.TwoFactor != nil }, []test{
		{"RecordsAreCopies", testCopies},
		{"TOTPSetupAndEnable", testTOTPEnable},
		{"EnableTOTPRace", testEnableRace},
		{"AcceptTOTPStep", testAcceptStep},
		{"AcceptTOTPStepRace", testAcceptStepRace},
		{"RecoveryCodes", testRecoveryCodes},
		{"ConsumeRecoveryCodeRace", testConsumeRace},
		{"DisableTOTP", testDisable},
	}},
	{"EmailVerification", func(p *parts) bool { return p.EmailVerification != nil }, []test{
		{"VerifyEmail", testVerifyEmail},
	}},
	{"EmailChange", func(p *parts) bool { return p.EmailChange != nil }, []test{
		{"ChangeEmail", testChangeEmail},
		{"ChangeEmailRace", testChangeEmailRace},
	}},
	{"PasswordReset", func(p *parts) bool { return p.PasswordReset != nil }, []test{
		{"ResetPassword", testResetPassword},
		{"ResetPasswordRace", testResetRace},
	}},
	{"PasswordChange", func(p *parts) bool { return p.PasswordChange != nil }, []test{
		{"ChangePassword", testChangePassword},
		{"ChangePasswordRace", testChangeRace},
	}},
	{"PasswordRehash", func(p *parts) bool { return p.PasswordRehash != nil }, []test{
		{"RehashPassword", testRehashPassword},
	}},
	{"SessionVersions", func(p *parts) bool { return p.SessionVersions != nil }, []test{
		{"SessionVersion", testSessionVersion},
	}},
	{"Lockout", func(p *parts) bool { return p.Lockout != nil }, []test{
		{"LoginFailures", testLoginFailures},
	}},
	{"Passkeys", func(p *parts) bool { return p.Passkeys != nil }, passkeyTests},
	{"EmailCodes", func(p *parts) bool { return p.EmailCodes != nil }, emailCodeTests},
	{"EmailCodeEraser", func(p *parts) bool { return p.EmailCodes != nil && p.EmailCodeEraser != nil }, emailCodeEraserTests},
	{"Identities", func(p *parts) bool { return p.Identities != nil }, identityTests},
	{"SignIns", func(p *parts) bool { return p.SignIns != nil }, signInTests},
	{"AccountDeleter", func(p *parts) bool { return p.AccountDeleter != nil }, accountDeleterTests},
	{"APIKeys", func(p *parts) bool { return p.APIKeys != nil }, apiKeyTests},
}

// RunUserStore runs the conformance suite of the user-store contract: one
// group of subtests per part (Accounts, Registration, TwoFactor,
// EmailVerification, EmailChange, PasswordReset, PasswordChange,
// PasswordRehash, SessionVersions, Lockout, Passkeys, EmailCodes,
// EmailCodeEraser, Identities, SignIns, AccountDeleter, APIKeys) that the
// store
// implements; a part it lacks is skipped, with the reason. A record is
// compared field by field only in the fields of the parts the store
// implements (a store without TwoFactor need not keep recovery codes).
//
// newStore returns a fresh, empty store for one subtest (S is the store's
// own type, or any interface of core/user). The suite makes its users with
// Create when the store implements user.Registration; a store without it
// (an app that creates accounts itself) passes WithSeed, how the app puts
// a user in. Without either the suite fails.
func RunUserStore[S user.Accounts](t *testing.T, newStore func(t *testing.T) S, opts ...Option) {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for _, part := range suite {
		t.Run(part.part, func(t *testing.T) {
			for _, tt := range part.tests {
				t.Run(tt.name, func(t *testing.T) {
					s := split(newStore(t))
					s.seed = o.seed
					if s.Registration == nil && s.seed == nil {
						t.Fatalf("the store (%T) implements neither user.Registration nor is given storetest.WithSeed: the suite cannot make its users", s.Accounts)
					}
					if !part.has(s) {
						t.Skipf("the store (%T) does not implement user.%s", s.Accounts, part.part)
					}
					tt.fn(t, s)
				})
			}
		})
	}
}

// Seed puts u in the store s as the app makes its accounts (an INSERT into
// its own table, say) and returns the stored record, with the id the store
// gave it. It keeps every field of the parts the store implements (the
// suite seeds a user with 2FA state only when the store has
// user.TwoFactor) and may drop the others.
type Seed func(t *testing.T, s user.Accounts, u *user.User) *user.User

// Option changes how RunUserStore runs.
type Option func(*options)

type options struct {
	seed Seed
}

// WithSeed makes RunUserStore put its users in with seed instead of
// user.Registration's Create: for a store of an app that creates accounts
// itself and implements no Registration.
func WithSeed(seed Seed) Option {
	return func(o *options) { o.seed = seed }
}

func ctx(t *testing.T) context.Context { return t.Context() }

// needRegistration skips a test that deletes a user on a store that cannot
// (no user.Registration).
func needRegistration(t *testing.T, s *parts) {
	t.Helper()
	if s.Registration == nil {
		t.Skipf("the store (%T) does not implement user.Registration, whose Delete this test calls", s.Accounts)
	}
}

func mustCreate(t *testing.T, s *parts, email string) *user.User {
	t.Helper()
	in := &user.User{Email: email, Name: "Test", PasswordHash: "hash-" + email}
	if s.Registration == nil {
		return s.seed(t, s.Accounts, in)
	}
	u, err := s.Create(ctx(t), in)
	if err != nil {
		t.Fatalf("Create(%q): %v", email, err)
	}
	return u
}

func mustGet(t *testing.T, s *parts, id string) *user.User {
	t.Helper()
	u, err := s.ByID(ctx(t), id)
	if err != nil {
		t.Fatalf("ByID(%q): %v", id, err)
	}
	return u
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func wantOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func ms(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

func sameTime(a, b time.Time) bool { return a.Equal(b) }

// enabled creates a user with 2FA on and the given recovery hashes.
func enabled(t *testing.T, s *parts, email string, hashes []string) *user.User {
	t.Helper()
	u := mustCreate(t, s, email)
	wantOK(t, "BeginTOTPSetup", s.BeginTOTPSetup(ctx(t), u.ID, "pending-1"))
	wantOK(t, "EnableTOTP", s.EnableTOTP(ctx(t), u.ID, user.EnableTOTP{
		Pending: "pending-1", Secret: "secret-1", RecoveryCodeHashes: hashes, Step: 100,
	}))
	return mustGet(t, s, u.ID)
}

// testSeedAndRead: a user made as the suite makes them all (Create, or the
// app's seed) reads back by id and by address with what it was given.
func testSeedAndRead(t *testing.T, s *parts) {
	u := mustCreate(t, s, "seeded@example.com")
	if u.ID == "" {
		t.Fatal("the new user has no id")
	}
	want := &user.User{Email: "seeded@example.com", Name: "Test", PasswordHash: "hash-seeded@example.com", CreatedAt: u.CreatedAt}
	byID, err := s.ByID(ctx(t), u.ID)
	wantOK(t, "ByID", err)
	checkRecord(t, s, "ByID", byID, u.ID, want)
	byEmail, err := s.ByEmail(ctx(t), "seeded@example.com")
	wantOK(t, "ByEmail", err)
	checkRecord(t, s, "ByEmail", byEmail, u.ID, want)
}

func testCreateAndRead(t *testing.T, s *parts) {
	in := &user.User{
		Email:              "ada@example.com",
		Name:               "Ada Lovelace ⚙ \u00e9",
		PasswordHash:       "$2a$04$abcdefghijklmnopqrstuu",
		RecoveryCodeHashes: []string{"h1", "h2"},
		LastTOTPStep:       1<<53 + 1,
		EmailVerifiedAt:    base,
		EmailChangedAt:     base.Add(-time.Hour),
		PasswordChangedAt:  base.Add(-2 * time.Hour),
		CreatedAt:          base.Add(-3 * time.Hour),
		SessionVersion:     7,
	}
	orig := in.Clone()
	got, err := s.Create(ctx(t), in)
	wantOK(t, "Create", err)
	if in.ID != orig.ID || !slices.Equal(in.RecoveryCodeHashes, orig.RecoveryCodeHashes) {
		t.Fatalf("Create modified its argument: %+v", in)
	}
	if got.ID == "" {
		t.Fatal("Create returned an empty ID")
	}
	for _, read := range []struct {
		how string
		get func() (*user.User, error)
	}{
		{"returned", func() (*user.User, error) { return got, nil }},
		{"ByID", func() (*user.User, error) { return s.ByID(ctx(t), got.ID) }},
		{"ByEmail", func() (*user.User, error) { return s.ByEmail(ctx(t), "ada@example.com") }},
	} {
		u, err := read.get()
		wantOK(t, read.how, err)
		checkRecord(t, s, read.how, u, got.ID, orig)
	}
}

// checkRecord compares u with want in the fields every store keeps and in
// those of the parts s implements.
func checkRecord(t *testing.T, s *parts, how string, u *user.User, id string, want *user.User) {
	t.Helper()
	if u.ID != id || u.Email != want.Email || u.Name != want.Name || u.PasswordHash != want.PasswordHash {
		t.Errorf("%s: record = %+v, want %+v", how, u, want)
	}
	if s.TwoFactor != nil && (u.LastTOTPStep != want.LastTOTPStep || u.TwoFactorEnabled != want.TwoFactorEnabled ||
		!slices.Equal(u.RecoveryCodeHashes, want.RecoveryCodeHashes)) {
		t.Errorf("%s: two-factor state = (step %d, enabled %v, codes %q), want (%d, %v, %q)", how,
			u.LastTOTPStep, u.TwoFactorEnabled, u.RecoveryCodeHashes, want.LastTOTPStep, want.TwoFactorEnabled, want.RecoveryCodeHashes)
	}
	if s.SessionVersions != nil && u.SessionVersion != want.SessionVersion {
		t.Errorf("%s: SessionVersion = %d, want %d", how, u.SessionVersion, want.SessionVersion)
	}
	for _, f := range []struct {
		name      string
		kept      bool
		got, want time.Time
	}{
		{"EmailVerifiedAt", s.EmailVerification != nil, u.EmailVerifiedAt, want.EmailVerifiedAt},
		{"EmailChangedAt", s.EmailChange != nil, u.EmailChangedAt, want.EmailChangedAt},
		{"PasswordChangedAt", s.PasswordChange != nil || s.PasswordReset != nil, u.PasswordChangedAt, want.PasswordChangedAt},
		{"CreatedAt", true, u.CreatedAt, want.CreatedAt},
	} {
		if f.kept && !sameTime(f.got, ms(f.want)) {
			t.Errorf("%s: %s = %v, want %v (millisecond precision)", how, f.name, f.got, ms(f.want))
		}
	}
}

func testCreateIDs(t *testing.T, s *parts) {
	seen := map[string]bool{}
	for i := range 20 {
		u := mustCreate(t, s, fmt.Sprintf("u%d@example.com", i))
		if seen[u.ID] {
			t.Fatalf("duplicate id %q", u.ID)
		}
		seen[u.ID] = true
		if u.CreatedAt.IsZero() {
			t.Fatal("Create left CreatedAt zero")
		}
	}
}

func testCreateDuplicate(t *testing.T, s *parts) {
	first := mustCreate(t, s, "dup@example.com")
	_, err := s.Create(ctx(t), &user.User{Email: "dup@example.com", PasswordHash: "other"})
	wantErr(t, "second Create", err, user.ErrEmailTaken)
	if got := mustGet(t, s, first.ID); got.PasswordHash != "hash-dup@example.com" {
		t.Fatalf("first user changed by failed Create: %+v", got)
	}
}

func testCreateRace(t *testing.T, s *parts) {
	n := countWinners(t, func(i int) error {
		_, err := s.Create(ctx(t), &user.User{Email: "race@example.com", PasswordHash: fmt.Sprint(i)})
		return err
	}, user.ErrEmailTaken)
	if n != 1 {
		t.Fatalf("racing Create: %d created, want 1 (and ErrEmailTaken for the others)", n)
	}
}

// testEmailBytes: emails compare byte for byte, so é and e are different
// addresses (a case- or accent-insensitive collation would merge them).
func testEmailBytes(t *testing.T, s *parts) {
	a := mustCreate(t, s, "jose@example.com")
	b := mustCreate(t, s, "jos\u00e9@example.com")
	if a.ID == b.ID {
		t.Fatal("two addresses mapped to one user")
	}
	got, err := s.ByEmail(ctx(t), "jos\u00e9@example.com")
	wantOK(t, "ByEmail", err)
	if got.ID != b.ID {
		t.Fatalf("ByEmail(josé) = %s, want %s", got.ID, b.ID)
	}
	_, err = s.ByEmail(ctx(t), "JOSE@example.com")
	wantErr(t, "ByEmail(uppercase)", err, user.ErrNotFound)
	_, err = s.ByEmail(ctx(t), "jose@example.com ")
	wantErr(t, "ByEmail(trailing space)", err, user.ErrNotFound)
}

func testNotFound(t *testing.T, s *parts) {
	c := ctx(t)
	mustCreate(t, s, "somebody@example.com") // a store with a user in it
	// Ids no user has, in the forms of the usual id types (random text, a
	// number, a UUID): each store must say ErrNotFound for every one, also
	// for those that cannot be one of its ids, never a driver error.
	for _, id := range []string{"no-such-user", "987654321", "0", "-1", "00000000-0000-4000-8000-000000000000", "x'; --", ""} {
		_, err := s.ByID(c, id)
		wantErr(t, fmt.Sprintf("ByID(%q)", id), err, user.ErrNotFound)
	}
	const id = "no-such-user"
	_, err := s.ByEmail(c, "nobody@example.com")
	wantErr(t, "ByEmail", err, user.ErrNotFound)
	if s.Registration != nil {
		wantErr(t, "Delete", s.Delete(c, id), user.ErrNotFound)
		wantErr(t, "Delete of a number no user has", s.Delete(c, "987654321"), user.ErrNotFound)
	}
	if s.TwoFactor != nil {
		wantErr(t, "BeginTOTPSetup", s.BeginTOTPSetup(c, id, "p"), user.ErrNotFound)
		wantErr(t, "EnableTOTP", s.EnableTOTP(c, id, user.EnableTOTP{Pending: "p"}), user.ErrNotFound)
		wantErr(t, "AcceptTOTPStep", s.AcceptTOTPStep(c, id, 1, 1), user.ErrNotFound)
		wantErr(t, "ConsumeRecoveryCode", s.ConsumeRecoveryCode(c, id, nil, nil), user.ErrNotFound)
		wantErr(t, "ReplaceRecoveryCodes", s.ReplaceRecoveryCodes(c, id, nil), user.ErrNotFound)
		wantErr(t, "DisableTOTP", s.DisableTOTP(c, id), user.ErrNotFound)
	}
	if s.EmailVerification != nil {
		wantErr(t, "VerifyEmail", s.VerifyEmail(c, id, "a@b.c", base), user.ErrNotFound)
	}
	if s.EmailChange != nil {
		wantErr(t, "ChangeEmail", s.ChangeEmail(c, id, "a@b.c", "d@e.f", base), user.ErrNotFound)
	}
	if s.PasswordReset != nil {
		wantErr(t, "ResetPassword", s.ResetPassword(c, id, user.Reset{Hash: "h", IssuedBefore: base, At: base}), user.ErrNotFound)
	}
	if s.PasswordChange != nil {
		wantErr(t, "ChangePassword", s.ChangePassword(c, id, "", "h", base), user.ErrNotFound)
	}
	if s.PasswordRehash != nil {
		wantErr(t, "RehashPassword", s.RehashPassword(c, id, "", "h"), user.ErrNotFound)
	}
	if s.SessionVersions != nil {
		_, err = s.BumpSessionVersion(c, id)
		wantErr(t, "BumpSessionVersion", err, user.ErrNotFound)
	}
	if s.Lockout != nil {
		_, _, err = s.RecordLoginFailure(c, id, 5, time.Minute, base)
		wantErr(t, "RecordLoginFailure", err, user.ErrNotFound)
		wantErr(t, "ClearLoginFailures", s.ClearLoginFailures(c, id), user.ErrNotFound)
	}
}

func testCopies(t *testing.T, s *parts) {
	u := enabled(t, s, "copy@example.com", []string{"a", "b"})
	u.RecoveryCodeHashes[0] = "changed"
	u.Email = "changed@example.com"
	again := mustGet(t, s, u.ID)
	if again.RecoveryCodeHashes[0] != "a" || again.Email != "copy@example.com" {
		t.Fatalf("changing a returned record changed the store: %+v", again)
	}
	hashes := []string{"x", "y"}
	wantOK(t, "ReplaceRecoveryCodes", s.ReplaceRecoveryCodes(ctx(t), u.ID, hashes))
	hashes[0] = "changed"
	if got := mustGet(t, s, u.ID).RecoveryCodeHashes; !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("store aliases the caller's slice: %v", got)
	}
}

func testDelete(t *testing.T, s *parts) {
	u := mustCreate(t, s, "gone@example.com")
	wantOK(t, "Delete", s.Delete(ctx(t), u.ID))
	_, err := s.ByID(ctx(t), u.ID)
	wantErr(t, "ByID after Delete", err, user.ErrNotFound)
	_, err = s.ByEmail(ctx(t), "gone@example.com")
	wantErr(t, "ByEmail after Delete", err, user.ErrNotFound)
	wantErr(t, "second Delete", s.Delete(ctx(t), u.ID), user.ErrNotFound)
	mustCreate(t, s, "gone@example.com") // the address is free again
}

func testTOTPEnable(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "totp@example.com")
	wantOK(t, "BeginTOTPSetup", s.BeginTOTPSetup(c, u.ID, "pending-a"))
	wantOK(t, "BeginTOTPSetup again", s.BeginTOTPSetup(c, u.ID, "pending-b"))
	if got := mustGet(t, s, u.ID); got.PendingTOTPSecret != "pending-b" || got.TwoFactorEnabled {
		t.Fatalf("after setup: %+v", got)
	}
	e := user.EnableTOTP{Pending: "pending-a", Secret: "secret", RecoveryCodeHashes: []string{"h1", "h2", "h3"}, Step: 58000001}
	wantErr(t, "EnableTOTP with a superseded pending secret", s.EnableTOTP(c, u.ID, e), user.ErrConflict)
	e.Pending = "pending-b"
	wantOK(t, "EnableTOTP", s.EnableTOTP(c, u.ID, e))
	got := mustGet(t, s, u.ID)
	if !got.TwoFactorEnabled || got.TOTPSecret != "secret" || got.PendingTOTPSecret != "" ||
		!slices.Equal(got.RecoveryCodeHashes, e.RecoveryCodeHashes) || got.LastTOTPStep != 58000001 {
		t.Fatalf("after enable: %+v", got)
	}
	wantErr(t, "EnableTOTP twice", s.EnableTOTP(c, u.ID, e), user.ErrConflict)
	wantErr(t, "BeginTOTPSetup while enabled", s.BeginTOTPSetup(c, u.ID, "pending-c"), user.ErrConflict)
	if got := mustGet(t, s, u.ID); got.PendingTOTPSecret != "" || got.TOTPSecret != "secret" {
		t.Fatalf("failed operations changed the record: %+v", got)
	}
	fresh := mustCreate(t, s, "nopending@example.com")
	wantErr(t, "EnableTOTP without a pending secret", s.EnableTOTP(c, fresh.ID, user.EnableTOTP{}), user.ErrConflict)
}

// testEnableRace: two confirmations (or fifty) of one setup end with 2FA
// fully enabled by exactly one of them, never a mix of their values.
func testEnableRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "enable-race@example.com")
	wantOK(t, "BeginTOTPSetup", s.BeginTOTPSetup(ctx(t), u.ID, "pending"))
	var winner atomic.Int64
	n := countWinners(t, func(i int) error {
		err := s.EnableTOTP(ctx(t), u.ID, user.EnableTOTP{
			Pending: "pending", Secret: fmt.Sprintf("secret-%d", i),
			RecoveryCodeHashes: []string{fmt.Sprintf("hash-%d", i)}, Step: int64(1000 + i),
		})
		if err == nil {
			winner.Store(int64(i))
		}
		return err
	}, user.ErrConflict)
	if n != 1 {
		t.Fatalf("racing EnableTOTP: %d winners, want 1", n)
	}
	i := winner.Load()
	got := mustGet(t, s, u.ID)
	if !got.TwoFactorEnabled || got.TOTPSecret != fmt.Sprintf("secret-%d", i) ||
		!slices.Equal(got.RecoveryCodeHashes, []string{fmt.Sprintf("hash-%d", i)}) || got.LastTOTPStep != 1000+i {
		t.Fatalf("record mixes racing confirmations (winner %d): %+v", i, got)
	}
}

func testAcceptStep(t *testing.T, s *parts) {
	c := ctx(t)
	off := mustCreate(t, s, "off@example.com")
	wantErr(t, "AcceptTOTPStep with 2FA off", s.AcceptTOTPStep(c, off.ID, 5, 5), user.ErrConflict)

	u := enabled(t, s, "steps@example.com", nil) // LastTOTPStep = 100
	for _, tc := range []struct {
		matched, current int64
		want             error
		last             int64
	}{
		{100, 101, user.ErrConflict, 100}, // matched step already used
		{101, 100, user.ErrConflict, 100}, // current step not past the last one
		{99, 101, user.ErrConflict, 100},
		{101, 101, nil, 101},
		{101, 102, user.ErrConflict, 101}, // same code again one step later
		{103, 102, nil, 103},              // next-step code: last = max(matched, current)
		{103, 103, user.ErrConflict, 103}, // ... cannot be replayed in its own step
		{104, 104, nil, 104},
		{105, 106, nil, 106},              // previous-step code: last = current, not matched
		{106, 106, user.ErrConflict, 106}, // ... so a code of the current step is refused
	} {
		err := s.AcceptTOTPStep(c, u.ID, tc.matched, tc.current)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Fatalf("AcceptTOTPStep(%d, %d) = %v, want %v", tc.matched, tc.current, err, tc.want)
		}
		if got := mustGet(t, s, u.ID).LastTOTPStep; got != tc.last {
			t.Fatalf("after AcceptTOTPStep(%d, %d): LastTOTPStep = %d, want %d", tc.matched, tc.current, got, tc.last)
		}
	}
}

func testAcceptStepRace(t *testing.T, s *parts) {
	u := enabled(t, s, "step-race@example.com", nil)
	n := countWinners(t, func(int) error { return s.AcceptTOTPStep(ctx(t), u.ID, 200, 200) }, user.ErrConflict)
	if n != 1 {
		t.Fatalf("racing AcceptTOTPStep with one code: %d accepted, want 1", n)
	}
	if got := mustGet(t, s, u.ID).LastTOTPStep; got != 200 {
		t.Fatalf("LastTOTPStep = %d, want 200", got)
	}
}

func testRecoveryCodes(t *testing.T, s *parts) {
	c := ctx(t)
	off := mustCreate(t, s, "codes-off@example.com")
	wantErr(t, "ReplaceRecoveryCodes with 2FA off", s.ReplaceRecoveryCodes(c, off.ID, []string{"x"}), user.ErrConflict)

	u := enabled(t, s, "codes@example.com", []string{"a", "b", "c"})
	wantErr(t, "Consume with stale hashes", s.ConsumeRecoveryCode(c, u.ID, []string{"a", "b"}, []string{"a"}), user.ErrConflict)
	wantErr(t, "Consume with reordered hashes", s.ConsumeRecoveryCode(c, u.ID, []string{"b", "a", "c"}, []string{"a", "c"}), user.ErrConflict)
	wantOK(t, "Consume", s.ConsumeRecoveryCode(c, u.ID, []string{"a", "b", "c"}, []string{"a", "c"}))
	if got := mustGet(t, s, u.ID).RecoveryCodeHashes; !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after consume: %v", got)
	}
	wantOK(t, "Consume to empty", s.ConsumeRecoveryCode(c, u.ID, []string{"a", "c"}, []string{}))
	wantOK(t, "Consume to empty", s.ConsumeRecoveryCode(c, u.ID, []string{}, []string{}))
	if got := mustGet(t, s, u.ID).RecoveryCodeHashes; len(got) != 0 {
		t.Fatalf("after consuming all: %v", got)
	}
	wantOK(t, "Replace", s.ReplaceRecoveryCodes(c, u.ID, []string{"n1", "n2"}))
	if got := mustGet(t, s, u.ID).RecoveryCodeHashes; !slices.Equal(got, []string{"n1", "n2"}) {
		t.Fatalf("after replace: %v", got)
	}
}

func testConsumeRace(t *testing.T, s *parts) {
	old := []string{"h1", "h2", "h3"}
	u := enabled(t, s, "consume-race@example.com", old)
	n := countWinners(t, func(int) error {
		return s.ConsumeRecoveryCode(ctx(t), u.ID, old, []string{"h1", "h3"})
	}, user.ErrConflict)
	if n != 1 {
		t.Fatalf("racing ConsumeRecoveryCode with one code: %d succeeded, want 1", n)
	}
	if got := mustGet(t, s, u.ID).RecoveryCodeHashes; !slices.Equal(got, []string{"h1", "h3"}) {
		t.Fatalf("after racing consume: %v", got)
	}
}

func testDisable(t *testing.T, s *parts) {
	c := ctx(t)
	u := enabled(t, s, "disable@example.com", []string{"a"})
	wantOK(t, "AcceptTOTPStep", s.AcceptTOTPStep(c, u.ID, 500, 500))
	wantOK(t, "DisableTOTP", s.DisableTOTP(c, u.ID))
	got := mustGet(t, s, u.ID)
	if got.TwoFactorEnabled || got.TOTPSecret != "" || got.PendingTOTPSecret != "" || len(got.RecoveryCodeHashes) != 0 || got.LastTOTPStep != 0 {
		t.Fatalf("after disable: %+v", got)
	}
	if got.SessionVersion != u.SessionVersion+1 {
		t.Fatalf("SessionVersion = %d, want %d", got.SessionVersion, u.SessionVersion+1)
	}
	wantErr(t, "DisableTOTP twice", s.DisableTOTP(c, u.ID), user.ErrConflict)
	if v := mustGet(t, s, u.ID).SessionVersion; v != got.SessionVersion {
		t.Fatalf("failed DisableTOTP raised SessionVersion to %d", v)
	}
}

func testVerifyEmail(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "verify@example.com")
	wantErr(t, "VerifyEmail for another address", s.VerifyEmail(c, u.ID, "other@example.com", base), user.ErrConflict)
	if got := mustGet(t, s, u.ID); !got.EmailVerifiedAt.IsZero() {
		t.Fatalf("failed VerifyEmail set EmailVerifiedAt: %v", got.EmailVerifiedAt)
	}
	wantOK(t, "VerifyEmail", s.VerifyEmail(c, u.ID, "verify@example.com", base))
	if got := mustGet(t, s, u.ID); !sameTime(got.EmailVerifiedAt, ms(base)) {
		t.Fatalf("EmailVerifiedAt = %v, want %v", got.EmailVerifiedAt, ms(base))
	}
	wantOK(t, "VerifyEmail again", s.VerifyEmail(c, u.ID, "verify@example.com", base.Add(time.Hour)))
	if got := mustGet(t, s, u.ID); !sameTime(got.EmailVerifiedAt, ms(base)) {
		t.Fatalf("second VerifyEmail moved EmailVerifiedAt to %v", got.EmailVerifiedAt)
	}
}

func testChangeEmail(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "old@example.com")
	other := mustCreate(t, s, "taken@example.com")
	wantOK(t, "VerifyEmail", s.VerifyEmail(c, u.ID, "old@example.com", base))

	wantErr(t, "ChangeEmail to a taken address", s.ChangeEmail(c, u.ID, "old@example.com", "taken@example.com", base), user.ErrEmailTaken)
	wantErr(t, "ChangeEmail from a stale address", s.ChangeEmail(c, u.ID, "stale@example.com", "new@example.com", base), user.ErrConflict)
	if got := mustGet(t, s, u.ID); got.Email != "old@example.com" || got.EmailVerifiedAt.IsZero() || got.SessionVersion != u.SessionVersion {
		t.Fatalf("failed ChangeEmail changed the record: %+v", got)
	}

	at := base.Add(time.Minute)
	wantOK(t, "ChangeEmail", s.ChangeEmail(c, u.ID, "old@example.com", "new@example.com", at))
	got := mustGet(t, s, u.ID)
	if got.Email != "new@example.com" || !got.EmailVerifiedAt.IsZero() || !sameTime(got.EmailChangedAt, ms(at)) || got.SessionVersion != u.SessionVersion+1 {
		t.Fatalf("after ChangeEmail: %+v", got)
	}
	if byNew, err := s.ByEmail(c, "new@example.com"); err != nil || byNew.ID != u.ID {
		t.Fatalf("ByEmail(new) = %v, %v", byNew, err)
	}
	_, err := s.ByEmail(c, "old@example.com")
	wantErr(t, "ByEmail(old)", err, user.ErrNotFound)
	mustCreate(t, s, "old@example.com") // the old address is free
	if got := mustGet(t, s, other.ID); got.Email != "taken@example.com" {
		t.Fatalf("other user changed: %+v", got)
	}
}

// testChangeEmailRace: two users racing for one address, and one user racing
// two changes from the same old address: one winner each time.
func testChangeEmailRace(t *testing.T, s *parts) {
	ids := make([]string, racers)
	for i := range ids {
		ids[i] = mustCreate(t, s, fmt.Sprintf("racer%d@example.com", i)).ID
	}
	n := countWinners(t, func(i int) error {
		return s.ChangeEmail(ctx(t), ids[i], fmt.Sprintf("racer%d@example.com", i), "prize@example.com", base)
	}, user.ErrEmailTaken)
	if n != 1 {
		t.Fatalf("users racing for one address: %d won, want 1", n)
	}
	u := mustCreate(t, s, "split@example.com")
	var winner atomic.Int64
	n = countWinners(t, func(i int) error {
		err := s.ChangeEmail(ctx(t), u.ID, "split@example.com", fmt.Sprintf("split%d@example.com", i), base)
		if err == nil {
			winner.Store(int64(i))
		}
		return err
	}, user.ErrConflict)
	if n != 1 {
		t.Fatalf("changes racing from one address: %d won, want 1", n)
	}
	if got := mustGet(t, s, u.ID).Email; got != fmt.Sprintf("split%d@example.com", winner.Load()) {
		t.Fatalf("Email = %q, want the winner's", got)
	}
	for i := range racers {
		if int64(i) == winner.Load() {
			continue
		}
		if _, err := s.ByEmail(ctx(t), fmt.Sprintf("split%d@example.com", i)); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("a losing change left address split%d behind: %v", i, err)
		}
	}
}

// withFailures gives u n counted login failures when the store keeps them,
// so that a test can check that a password change clears them.
func withFailures(t *testing.T, s *parts, u *user.User, n int) int {
	t.Helper()
	if s.Lockout == nil {
		return 0
	}
	failures(t, s, u.ID, n)
	return n
}

func testResetPassword(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "reset@example.com")
	withFailures(t, s, u, 2)

	// A link issued at base, bound to the hash of the time.
	at := base.Add(time.Minute)
	wantErr(t, "reset bound to a stale hash",
		s.ResetPassword(c, u.ID, user.Reset{OldHash: "nope", Hash: "h2", IssuedBefore: base, At: at}), user.ErrConflict)
	if got := mustGet(t, s, u.ID); got.PasswordHash != u.PasswordHash || !got.PasswordChangedAt.IsZero() {
		t.Fatalf("a refused reset changed the record: %+v", got)
	}
	wantOK(t, "reset", s.ResetPassword(c, u.ID, user.Reset{OldHash: u.PasswordHash, Hash: "h2", IssuedBefore: base, At: at}))
	got := mustGet(t, s, u.ID)
	if got.PasswordHash != "h2" || !sameTime(got.PasswordChangedAt, ms(at)) || got.SessionVersion != u.SessionVersion+1 ||
		got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
		t.Fatalf("after reset: %+v", got)
	}
	wantErr(t, "reset with the same link", s.ResetPassword(c, u.ID, user.Reset{OldHash: "h2", Hash: "h3", IssuedBefore: base, At: at.Add(time.Second)}), user.ErrConflict)
	wantErr(t, "reset with a link issued in the same millisecond as the change",
		s.ResetPassword(c, u.ID, user.Reset{OldHash: "h2", Hash: "h3", IssuedBefore: at, At: at.Add(time.Second)}), user.ErrConflict)
	wantOK(t, "reset with a link issued after the change",
		s.ResetPassword(c, u.ID, user.Reset{OldHash: "h2", Hash: "h3", IssuedBefore: at.Add(time.Millisecond), At: at.Add(time.Second)}))
	if got := mustGet(t, s, u.ID); got.PasswordHash != "h3" || got.SessionVersion != u.SessionVersion+2 {
		t.Fatalf("after the second reset: %+v", got)
	}
}

func testResetRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "reset-race@example.com")
	passwordRace(t, s, u, "resets with one link", func(hash string) error {
		return s.ResetPassword(ctx(t), u.ID, user.Reset{OldHash: u.PasswordHash, Hash: hash, IssuedBefore: base, At: base.Add(time.Second)})
	})
}

// passwordRace races set, each racer with a hash of its own, and checks
// that exactly one won, that its hash is the stored one and that sessions
// ended once.
func passwordRace(t *testing.T, s *parts, u *user.User, what string, set func(hash string) error) {
	t.Helper()
	var winner atomic.Int64
	n := countWinners(t, func(i int) error {
		err := set(fmt.Sprintf("hash-%d", i))
		if err == nil {
			winner.Store(int64(i))
		}
		return err
	}, user.ErrConflict)
	if n != 1 {
		t.Fatalf("racing %s: %d succeeded, want 1", what, n)
	}
	got := mustGet(t, s, u.ID)
	if got.PasswordHash != fmt.Sprintf("hash-%d", winner.Load()) || got.SessionVersion != u.SessionVersion+1 {
		t.Fatalf("after racing %s: %+v", what, got)
	}
}

func testChangePassword(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "change@example.com")
	withFailures(t, s, u, 2)
	at := base.Add(time.Hour)
	wantErr(t, "change with a stale hash", s.ChangePassword(c, u.ID, "nope", "h2", at), user.ErrConflict)
	if got := mustGet(t, s, u.ID); got.PasswordHash != u.PasswordHash || !got.PasswordChangedAt.IsZero() || got.SessionVersion != u.SessionVersion {
		t.Fatalf("a refused change changed the record: %+v", got)
	}
	wantOK(t, "change", s.ChangePassword(c, u.ID, u.PasswordHash, "h2", at))
	got := mustGet(t, s, u.ID)
	if got.PasswordHash != "h2" || !sameTime(got.PasswordChangedAt, ms(at)) || got.SessionVersion != u.SessionVersion+1 ||
		got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
		t.Fatalf("after change: %+v", got)
	}
	wantErr(t, "change from the replaced hash", s.ChangePassword(c, u.ID, u.PasswordHash, "h3", at), user.ErrConflict)
}

func testChangeRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "change-race@example.com")
	passwordRace(t, s, u, "changes from one hash", func(hash string) error {
		return s.ChangePassword(ctx(t), u.ID, u.PasswordHash, hash, base)
	})
}

func testRehashPassword(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "rehash@example.com")
	n := withFailures(t, s, u, 2)
	wantErr(t, "rehash of a stale hash", s.RehashPassword(c, u.ID, "nope", "h2"), user.ErrConflict)
	wantOK(t, "rehash", s.RehashPassword(c, u.ID, u.PasswordHash, "h2"))
	got := mustGet(t, s, u.ID)
	if got.PasswordHash != "h2" || !got.PasswordChangedAt.IsZero() || got.SessionVersion != u.SessionVersion || got.FailedLogins != n {
		t.Fatalf("after rehash (only the hash may change): %+v", got)
	}
	// Two logins rehashing at once: one wins, the other is told, nothing is lost.
	if wins := countWinners(t, func(i int) error {
		return s.RehashPassword(c, u.ID, "h2", fmt.Sprintf("h3-%d", i))
	}, user.ErrConflict); wins != 1 {
		t.Fatalf("racing rehashes of one hash: %d succeeded, want 1", wins)
	}
}

func testSessionVersion(t *testing.T, s *parts) {
	u := mustCreate(t, s, "versions@example.com")
	v, err := s.BumpSessionVersion(ctx(t), u.ID)
	wantOK(t, "BumpSessionVersion", err)
	if v != u.SessionVersion+1 {
		t.Fatalf("BumpSessionVersion = %d, want %d", v, u.SessionVersion+1)
	}
	race(t, func(int) error { _, err := s.BumpSessionVersion(ctx(t), u.ID); return err })
	if got := mustGet(t, s, u.ID).SessionVersion; got != v+racers {
		t.Fatalf("after %d racing bumps: %d, want %d (a bump was lost)", racers, got, v+racers)
	}
}

func failures(t *testing.T, s *parts, id string, n int) {
	t.Helper()
	for range n {
		if _, _, err := s.RecordLoginFailure(ctx(t), id, 100, time.Hour, base); err != nil {
			t.Fatalf("RecordLoginFailure: %v", err)
		}
	}
}

func testLoginFailures(t *testing.T, s *parts) {
	c := ctx(t)
	u := mustCreate(t, s, "failures@example.com")
	for i := 1; i <= 2; i++ {
		n, until, err := s.RecordLoginFailure(c, u.ID, 3, time.Hour, base)
		wantOK(t, "RecordLoginFailure", err)
		if n != i || !until.IsZero() {
			t.Fatalf("failure %d: count %d, lockedUntil %v", i, n, until)
		}
	}
	n, until, err := s.RecordLoginFailure(c, u.ID, 3, time.Hour, base)
	wantOK(t, "RecordLoginFailure", err)
	if n != 3 || !sameTime(until, ms(base.Add(time.Hour))) {
		t.Fatalf("third failure: count %d, lockedUntil %v; want 3, %v", n, until, ms(base.Add(time.Hour)))
	}
	got := mustGet(t, s, u.ID)
	if got.FailedLogins != 0 || !sameTime(got.LockedUntil, ms(base.Add(time.Hour))) {
		t.Fatalf("after lock: FailedLogins %d, LockedUntil %v", got.FailedLogins, got.LockedUntil)
	}
	wantOK(t, "ClearLoginFailures", s.ClearLoginFailures(c, u.ID))
	if got := mustGet(t, s, u.ID); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
		t.Fatalf("after clear: %+v", got)
	}

	// Concurrent failures are all counted.
	race(t, func(int) error { _, _, err := s.RecordLoginFailure(c, u.ID, 1000, time.Hour, base); return err })
	if got := mustGet(t, s, u.ID).FailedLogins; got != racers {
		t.Fatalf("after %d racing failures: FailedLogins = %d", racers, got)
	}
}

// race runs fn in racers goroutines released at once, and fails the test
// with the first unexpected error.
func race(t *testing.T, fn func(i int) error) {
	t.Helper()
	raceN(t, racers, fn)
}

// raceN is race with n goroutines, numbered 0 to n-1.
func raceN(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := fn(i); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("racing goroutine: %v", err)
	}
}

// countWinners races fn and returns how many calls succeeded; every other
// call must fail with loser.
func countWinners(t *testing.T, fn func(i int) error, loser error) int {
	t.Helper()
	return countWinnersN(t, racers, fn, loser)
}

// countWinnersN is countWinners with n racing calls, numbered 0 to n-1.
func countWinnersN(t *testing.T, n int, fn func(i int) error, loser error) int {
	t.Helper()
	var wins atomic.Int32
	raceN(t, n, func(i int) error {
		err := fn(i)
		switch {
		case err == nil:
			wins.Add(1)
			return nil
		case errors.Is(err, loser):
			return nil
		default:
			return fmt.Errorf("loser got %w, want %v", err, loser)
		}
	})
	return int(wins.Load())
}

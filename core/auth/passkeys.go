package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Passkey management: the list of the signed-in user's passkeys, renaming
// and deleting one. These need only the store's user.Passkeys part, no
// WebAuthn, so they live in core beside the session list; the passkeys
// module registers passkeys (a WebAuthn ceremony) and serves these as its
// JSON routes. Without user.Passkeys in Config.Users the methods fail with
// [ErrFeatureDisabled].

// MaxPasskeyName is the most characters a passkey's name may have.
const MaxPasskeyName = 64

// PasskeyInfo is one passkey of the signed-in user as the list shows it.
type PasskeyInfo struct {
	// ID is the credential id, base64url without padding: what
	// RenamePasskeyInput.ID and DeletePasskeyInput.ID take.
	ID             string
	Name           string
	CreatedAt      time.Time
	LastUsedAt     time.Time // zero until first used
	BackupEligible bool      // the credential can be synced (the BE flag at registration)
	BackedUp       bool      // it is synced (the BS flag last seen)
}

// NewPasskeyInfo is p as the list shows it, for the passkeys module,
// which returns the passkey it just registered in the same shape.
func NewPasskeyInfo(p *user.Passkey) PasskeyInfo {
	return PasskeyInfo{ID: base64.RawURLEncoding.EncodeToString(p.ID), Name: p.Name, CreatedAt: p.CreatedAt,
		LastUsedAt: p.LastUsedAt, BackupEligible: p.BackupEligible, BackedUp: p.BackupState}
}

// ListPasskeys is GET /api/passkeys: the signed-in user's passkeys, oldest
// first. None is an empty slice. Without a session it fails with
// [ErrNotAuthenticated].
func (s *Service) ListPasskeys(ctx context.Context, v *Visit) (_ []PasskeyInfo, err error) {
	ctx, flow := s.enter(ctx, v, "passkeys")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.passkeyStore, s.CurrentUser)
	if err != nil {
		return nil, err
	}
	keys, err := st.ListPasskeys(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("passkeys: list: %w", err)
	}
	out := make([]PasskeyInfo, len(keys))
	for i, p := range keys {
		out[i] = NewPasskeyInfo(p)
	}
	return out, nil
}

// RenamePasskeyInput is what RenamePasskey takes.
type RenamePasskeyInput struct {
	ID   string // a PasskeyInfo.ID
	Name string // the new name: see CheckPasskeyName
}

// RenamePasskey is POST /api/passkeys/rename: it names one passkey of the
// signed-in user and returns it renamed. A session is enough (a name
// grants nothing, so no recent authentication is asked for). The name
// must pass [CheckPasskeyName]; an id that is not one of the user's
// passkeys, another user's included, fails with [ErrPasskeyNotFound].
func (s *Service) RenamePasskey(ctx context.Context, v *Visit, in RenamePasskeyInput) (_ PasskeyInfo, err error) {
	ctx, flow := s.enter(ctx, v, "passkeys/rename")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.passkeyStore, s.CurrentUser)
	if err != nil {
		return PasskeyInfo{}, err
	}
	id, err := passkeyID(in.ID)
	if err != nil {
		return PasskeyInfo{}, err
	}
	name, err := CheckPasskeyName(in.Name)
	if err != nil {
		return PasskeyInfo{}, err
	}
	if err := st.RenamePasskey(ctx, u.ID, id, name); err != nil {
		if errors.Is(err, user.ErrNotFound) {
			return PasskeyInfo{}, ErrPasskeyNotFound
		}
		return PasskeyInfo{}, fmt.Errorf("passkeys: rename: %w", err)
	}
	p, err := st.PasskeyByID(ctx, id)
	if errors.Is(err, user.ErrNotFound) || (err == nil && p.UserID != u.ID) {
		return PasskeyInfo{}, ErrPasskeyNotFound // deleted since, by a racing request
	}
	if err != nil {
		return PasskeyInfo{}, fmt.Errorf("passkeys: rename: %w", err)
	}
	return NewPasskeyInfo(p), nil
}

// DeletePasskeyInput is what DeletePasskey takes.
type DeletePasskeyInput struct {
	ID string // a PasskeyInfo.ID
}

// DeletePasskey is POST /api/passkeys/delete: it deletes one passkey of
// the signed-in user. Like adding one it needs a recent authentication
// ([ErrReauthenticationRequired]): whoever holds a stolen session must not
// remove the owner's way in. An id that is not one of the user's passkeys,
// another user's included, fails with [ErrPasskeyNotFound]. A deletion is
// audited (EventPasskeyDeleted, Detail: its name) and mails the owner the
// KindPasskeyDeleted notice.
//
// The last passkey of an account without a password is refused with
// [ErrLastSignInMethod] while it is the account's only way in: no linked
// identity of a social sign-in (user.Identities) and sign-in by email off.
// A password reset, which would set a password, is recovery, not a way in
// the user chose: the account first sets a password (or links an
// identity), then deletes the passkey. Two racing deletions of the last
// two passkeys cannot both win: each checks again after deleting, and a
// deletion that left no way in is undone (the passkey is stored again)
// and refused.
//
// It never turns 2FA off: a passkey is a second factor beside TOTP (2FA on
// means TOTP on), so the last passkey of a 2FA account is never its last
// second factor; turning 2FA off stays DisableTwoFactor, with the current
// password.
func (s *Service) DeletePasskey(ctx context.Context, v *Visit, in DeletePasskeyInput) (err error) {
	ctx, flow := s.enter(ctx, v, "passkeys/delete")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.passkeyStore, s.RecentUser)
	if err != nil {
		return err
	}
	id, err := passkeyID(in.ID)
	if err != nil {
		return err
	}
	p, err := st.PasskeyByID(ctx, id)
	if errors.Is(err, user.ErrNotFound) || (err == nil && p.UserID != u.ID) {
		return ErrPasskeyNotFound
	}
	if err != nil {
		return fmt.Errorf("passkeys: delete: %w", err)
	}
	if err := s.keepsWayIn(ctx, u, st, p.ID); err != nil {
		return err
	}
	if err := st.DeletePasskey(ctx, u.ID, id); err != nil {
		if errors.Is(err, user.ErrNotFound) {
			return ErrPasskeyNotFound
		}
		return fmt.Errorf("passkeys: delete: %w", err)
	}
	if err := s.keepsWayIn(ctx, u, st, nil); err != nil {
		// A racing deletion took the other passkey meanwhile: this one
		// comes back, so that the account keeps a way in.
		if aerr := st.AddPasskey(context.WithoutCancel(ctx), p); aerr != nil && !errors.Is(aerr, user.ErrConflict) {
			return fmt.Errorf("passkeys: restore the last passkey: %w (after %w)", aerr, err)
		}
		return err
	}
	s.audit(ctx, v, Event{Type: EventPasskeyDeleted, UserID: u.ID, Detail: p.Name})
	s.Modules().Notify(ctx, v, mail.KindPasskeyDeleted, u, mail.Data{PasskeyName: p.Name})
	return nil
}

// CheckPasskeyName trims a passkey's name and checks it: not empty
// ([ErrNameRequired]), no invalid UTF-8, control characters or Unicode
// format characters that hide or reorder text (bidi overrides and
// isolates such as U+202E and U+2066, zero-width characters): the rule of
// every text field of the JSON routes, a user's name included
// ([ErrInvalidCharacters]), at most MaxPasskeyName characters
// ([ErrNameTooLong]). RenamePasskey applies it; the passkeys module
// applies it to the name given at registration.
func CheckPasskeyName(name string) (string, error) {
	return checkName(name, MaxPasskeyName)
}

// checkName trims name and checks it is not empty, printable and at most
// limit characters: the rule of the names a user gives a credential.
func checkName(name string, limit int) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", ErrNameRequired
	case !printable(name):
		return "", ErrInvalidCharacters
	case utf8.RuneCountInString(name) > limit:
		return "", ErrNameTooLong
	}
	return name, nil
}

// passkeyID decodes a PasskeyInfo.ID; a value that is not base64url names
// no passkey.
func passkeyID(s string) ([]byte, error) {
	id, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(id) == 0 {
		return nil, ErrPasskeyNotFound
	}
	return id, nil
}

// passkeyStore returns Config.Users's user.Passkeys part, or
// ErrFeatureDisabled without one.
// PasskeyStore returns the user store's user.Passkeys part as the flows
// call it (its calls reported to Config.Observer when one is set), and
// false when Config.Users has no such part: for the passkeys and pages
// modules, which check it once, in their constructors.
func (m *Modules) PasskeyStore() (user.Passkeys, bool) {
	s := m.svc()
	return s.users.passkeys, s.users.passkeys != nil
}

func (s *Service) passkeyStore() (user.Passkeys, error) {
	if s.users.passkeys == nil {
		return nil, ErrFeatureDisabled
	}
	return s.users.passkeys, nil
}

// revokePasskeys deletes every passkey of u, after a change that says the
// account may be in someone else's hands: a password reset (whoever resets
// proved the mailbox, not that the passkeys are theirs: an attacker who
// registered the address first, or a thief, may have added one) and
// logout-everywhere. Each deletion is audited (EventPasskeyDeleted, Detail:
// its name) and mails the KindPasskeyDeleted notice, so the owner sees
// which to add again. The caller raised the session version first, so a
// registration racing this call either stored its passkey before the list
// (deleted here) or finds the version raised after storing it and deletes
// it itself (the passkeys module's FinishRegistration). A store that fails
// is logged and the rest go on: the change itself is committed.
func (s *Service) revokePasskeys(ctx context.Context, v *Visit, u *user.User) {
	st := s.users.passkeys
	if st == nil {
		return
	}
	keys, err := st.ListPasskeys(ctx, u.ID)
	if err != nil {
		s.log.ErrorContext(ctx, "authkit: passkeys not revoked", "user", u.ID, "err", err)
		return
	}
	for _, p := range keys {
		if err := st.DeletePasskey(ctx, u.ID, p.ID); err != nil {
			if !errors.Is(err, user.ErrNotFound) { // deleted meanwhile: gone all the same
				s.log.ErrorContext(ctx, "authkit: passkey not revoked", "user", u.ID, "err", err)
			}
			continue
		}
		s.audit(ctx, v, Event{Type: EventPasskeyDeleted, UserID: u.ID, Detail: p.Name})
		s.Modules().Notify(ctx, v, mail.KindPasskeyDeleted, u, mail.Data{PasskeyName: p.Name})
	}
}

// keepsWayIn reports, with ErrLastSignInMethod, when u would have no way
// to sign in without the passkey but: no password, no passkey other than
// but (nil: none) left, no linked identity and sign-in by email off.
func (s *Service) keepsWayIn(ctx context.Context, u *user.User, st user.Passkeys, but []byte) error {
	if u.PasswordHash != "" || s.HasEmailSignIn() {
		return nil
	}
	keys, err := st.ListPasskeys(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("passkeys: list: %w", err)
	}
	for _, k := range keys {
		if but == nil || !bytesEqual(k.ID, but) {
			return nil
		}
	}
	if ids, ok := s.cfg.Users.(user.Identities); ok {
		list, err := ids.ListIdentities(ctx, u.ID)
		if err != nil && !errors.Is(err, user.ErrNotFound) {
			return fmt.Errorf("passkeys: identities: %w", err)
		}
		if len(list) > 0 {
			return nil
		}
	}
	return ErrLastSignInMethod
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

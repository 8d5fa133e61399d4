package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/nethttpauth"
)

// The staff sign-in: the app checks a name and a password itself (here a
// list from STAFF_DIRECTORY; in a real app an LDAP bind, a legacy table, a
// device certificate) and then hands the account to authkit for the second
// step with StartSecondStep: a staff member with 2FA on enters a TOTP or
// recovery code on the same /2fa page as everyone else, one without is
// signed in at once. authkit's session carries on from there.

// staffMember is one entry of the directory: the account it stands for in
// authkit's store, by its address, and the password the directory checks.
type staffMember struct {
	email, password string
}

// directory is the app's own credential check.
type directory map[string]staffMember

// parseDirectory reads STAFF_DIRECTORY: "name:email:password,...", the
// password last so that it may hold a colon (a demonstration: a directory
// keeps no plain passwords).
func parseDirectory(s string) (directory, error) {
	d := directory{}
	for _, entry := range strings.Split(s, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		parts := strings.SplitN(entry, ":", 3)
		if len(parts) != 3 || parts[0] == "" || !strings.Contains(parts[1], "@") || parts[2] == "" {
			return nil, fmt.Errorf("STAFF_DIRECTORY: %q is not name:email:password", entry)
		}
		d[parts[0]] = staffMember{email: strings.ToLower(parts[1]), password: parts[2]}
	}
	return d, nil
}

// check returns the address of name's account when password is name's.
func (d directory) check(name, password string) (email string, ok bool) {
	m, found := d[name]
	if !found {
		m = staffMember{password: "\x00 no such member"} // compare anyway: the same work
	}
	same := subtle.ConstantTimeCompare([]byte(m.password), []byte(password)) == 1
	return m.email, found && same
}

// errStaffCredentials is the app's own answer to a name and password its
// directory refuses (or whose account authkit does not hold): one text for
// both, as authkit's login gives.
var errStaffCredentials = errors.New("unknown name or wrong password")

// staffLimit is the app's own limit on its check: StartSecondStep counts
// none (the second step counts authkit's 2FA limit as always).
var staffLimit = auth.Limit{Max: 10, Window: 15 * time.Minute}

func (a *app) staffLogin(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Staff sign-in"}
	if err := parseForm(w, r); err != nil {
		a.fail(w, r, "staff.html", p, err, nil)
		return
	}
	name, password := r.PostForm.Get("name"), r.PostForm.Get("password")
	p.Values = map[string]string{"name": name}
	v := nethttpauth.Visit(r, a.svc)
	if err := a.staffLimit.Attempt(r.Context(), v); err != nil {
		nethttpauth.WriteHeaders(w, v)
		a.fail(w, r, "staff.html", p, err, nil)
		return
	}
	userID, err := a.staffAccount(r.Context(), name, password)
	if err != nil {
		nethttpauth.WriteHeaders(w, v)
		p.Errors = map[string]string{"password": "Unknown name or wrong password"}
		a.render(w, http.StatusUnauthorized, "staff.html", p)
		return
	}
	res, err := a.svc.StartSecondStep(r.Context(), v, auth.SecondStepInput{UserID: userID})
	nethttpauth.WriteHeaders(w, v) // the 2fa_pending cookie, or the session
	switch {
	case err != nil:
		a.fail(w, r, "staff.html", p, err, fieldIs("password", auth.ErrInvalidCredentials, auth.ErrUnknownUser))
	case res.RequiresTwoFactor:
		redirect(w, r, "/2fa")
	default:
		redirect(w, r, "/account")
	}
}

// staffAccount is the id, in authkit's store, of the account the directory
// vouches for.
func (a *app) staffAccount(ctx context.Context, name, password string) (string, error) {
	email, ok := a.directory.check(name, password)
	if !ok {
		return "", errStaffCredentials
	}
	u, err := a.users.ByEmail(ctx, email)
	if err != nil {
		return "", errStaffCredentials
	}
	return u.ID, nil
}

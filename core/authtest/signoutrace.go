package authtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
)

// A sign-out racing a security change (another tab, "sign out" on another
// device, the support CLI ending sessions): once the change is saved it is
// always mailed and audited, and answered as done, whatever happens to the
// session afterwards.

// signOutFirst wraps a record store: once armed, the next Touch of a
// record (the renewal of the changing request's session) first deletes
// that record, as a sign-out landing between the change and the renewal
// does.
type signOutFirst struct {
	session.Store
	armed atomic.Bool
}

func (s *signOutFirst) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	if s.armed.CompareAndSwap(true, false) {
		if r, err := s.Get(ctx, id); err == nil {
			_ = s.Delete(ctx, r.UserID, id)
		}
	}
	return s.Store.Touch(ctx, id, seen, expires)
}

// securityChange is one change that ends the other sessions and renews the
// current one.
type securityChange struct {
	name  string
	path  string
	body  func(pw string) obj
	msg   string
	kind  mail.Kind
	event auth.EventType
	twoFA bool // needs 2FA on first
}

var securityChanges = []securityChange{
	{"password change", "/api/auth/change-password", func(pw string) obj { return obj{"currentPassword": pw, "newPassword": newPassword} },
		msgPasswordChanged, mail.KindPasswordChanged, auth.EventPasswordChanged, false},
	{"email change", "/api/auth/change-email", func(pw string) obj { return obj{"newEmail": "new@example.com", "password": pw} },
		msgEmailChanged, mail.KindEmailChanged, auth.EventEmailChanged, false},
	{"2FA disable", "/api/2fa/disable", func(pw string) obj { return obj{"password": pw} },
		msg2FADisabled, mail.KindTwoFactorDisabled, auth.EventTwoFactorDisabled, true},
}

// signOutDuringChange: the session is ended between a change's store write
// and its renewal. The change answers its 200 message, expires the
// session cookie (that session stays ended), and its notice and audit
// event are there.
func (s suite) signOutDuringChange(t *testing.T) {
	for _, ch := range securityChanges {
		t.Run(ch.name, func(t *testing.T) {
			var st *signOutFirst
			e := s.recordEnv(t, func(c *auth.Config) {
				st = &signOutFirst{Store: c.Sessions}
				c.Sessions = st
			})
			u := e.seed(t, "ada@example.com")
			c := e.loggedIn(t, "ada@example.com")
			if ch.twoFA {
				e.enable2FA(t, c)
			}
			before := e.byID(t, u.ID)
			st.armed.Store(true)
			mustMessage(t, c.post(ch.path, ch.body(goodPassword)), ch.msg)
			if after := e.byID(t, u.ID); after.SessionVersion != before.SessionVersion+1 {
				t.Fatalf("session version %d, want %d: the change was not saved", after.SessionVersion, before.SessionVersion+1)
			}
			if n := len(e.mails(t, "ada@example.com", ch.kind)); n != 1 {
				t.Errorf("%d %s mails, want 1", n, ch.kind)
			}
			if n := e.audit.Count(ch.event, u.ID); n != 1 {
				t.Errorf("%d %s events, want 1", n, ch.event)
			}
			mustBeSignedOut(t, c)
		})
	}
}

// signOutRacesChange races each change with a logout of the same session
// from another tab, round after round (a fresh account each): the change
// answers 200 (saved, mailed once, audited once) or 401 (the logout came
// first: nothing saved, nothing mailed), never a server error.
func (s suite) signOutRacesChange(t *testing.T) {
	for _, ch := range securityChanges {
		t.Run(ch.name, func(t *testing.T) {
			e := s.recordEnv(t)
			for round := range 6 {
				email := fmt.Sprintf("ada%d@example.com", round)
				u := e.seed(t, email)
				c := e.loggedIn(t, email)
				if ch.twoFA {
					e.enable2FA(t, c)
				}
				tab := e.client()
				tab.setCookie(sessionCookie, c.cookie(sessionCookie).Value)
				body, err := json.Marshal(ch.body(goodPassword))
				if err != nil {
					t.Fatal(err)
				}
				if ch.name == "email change" {
					body, _ = json.Marshal(obj{"newEmail": fmt.Sprintf("new%d@example.com", round), "password": goodPassword})
				}
				before := e.byID(t, u.ID)
				var changed *reply
				var cerr, lerr error
				var wg sync.WaitGroup
				wg.Go(func() { changed, cerr = c.try(http.MethodPost, ch.path, "application/json", body) })
				wg.Go(func() { _, lerr = tab.try(http.MethodPost, "/api/auth/logout", "", nil) })
				wg.Wait()
				if cerr != nil || lerr != nil {
					t.Fatal(cerr, lerr)
				}
				saved := e.byID(t, u.ID).SessionVersion == before.SessionVersion+1
				mails, events := len(e.mails(t, email, ch.kind)), e.audit.Count(ch.event, u.ID)
				switch {
				case saved && changed.Status == http.StatusOK && changed.str("message") == ch.msg:
					if mails != 1 || events != 1 {
						t.Errorf("round %d: saved, %d %s mails and %d %s events, want 1 and 1", round, mails, ch.kind, events, ch.event)
					}
				case !saved && changed.Status == http.StatusUnauthorized:
					if mails != 0 || events != 0 {
						t.Errorf("round %d: not saved, but %d %s mails and %d %s events", round, mails, ch.kind, events, ch.event)
					}
				default:
					t.Fatalf("round %d: %s, saved %t: want 200 when saved, 401 when not", round, changed, saved)
				}
			}
		})
	}
}

package authtest

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
)

// smallStores gives every limit its own in-memory store of three keys on
// the suite's clock, whatever store the harness uses, so a test can fill
// one.
func smallStores(c *auth.Config) {
	c.LimitStore = nil
	c.LimitCapacity = 3
}

func (s suite) fullLoginEmailStore(t *testing.T) {
	e := s.env(t, trustAll, smallStores)
	e.seed(t, "ada@example.com")
	c := e.clientFrom("203.0.113.1")
	for i := range 3 { // fills login:email
		mustStatus(t, c.login(fmt.Sprintf("junk%d@example.com", i), wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	if got := e.audit.Details(auth.EventLimitStoreFull); len(got) != 0 {
		t.Fatalf("limit_store_full events %q before the store is full", got)
	}
	victim := e.clientFrom("198.51.100.7")
	r := victim.login("ada@example.com", goodPassword)
	mustBody(t, r, obj{"success": true})
	mustBeSignedIn(t, victim, "ada@example.com")
	// Headers come from the address key, the only one counted.
	e.mustRemaining(t, r, 10, e.clock.Now().Add(15*time.Minute))
	if got := e.audit.Details(auth.EventLimitStoreFull); !slices.Equal(got, []string{"login:email"}) {
		t.Errorf("limit_store_full events %q, want [login:email]", got)
	}
	// Guesses on an address the full store does not hold go uncounted
	// by it; the address limit still bounds them.
	guesser := e.clientFrom("198.51.100.8")
	for range 10 {
		mustStatus(t, guesser.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	e.mustLimited(t, guesser.login("ada@example.com", wrongPassword), msgTooManyLogins, e.clock.Now().Add(15*time.Minute))
	// Reported once a minute at most, however many keys it refuses.
	if got := e.audit.Details(auth.EventLimitStoreFull); !slices.Equal(got, []string{"login:email"}) {
		t.Errorf("limit_store_full events %q within a minute, want one", got)
	}
	e.clock.Advance(time.Minute)
	mustLogin(t, e.clientFrom("198.51.100.7"), "ada@example.com", goodPassword)
	if got := e.audit.Details(auth.EventLimitStoreFull); !slices.Equal(got, []string{"login:email", "login:email"}) {
		t.Errorf("limit_store_full events %q a minute later, want two", got)
	}
}

func (s suite) fullResetEmailStore(t *testing.T) {
	e := s.env(t, trustAll, smallStores)
	e.seed(t, "ada@example.com")
	c := e.clientFrom("203.0.113.1")
	for i := range 3 { // fills reset:email
		mustMessage(t, c.post("/api/auth/forgot-password", obj{"email": fmt.Sprintf("junk%d@example.com", i)}), msgForgotSent)
	}
	r := e.clientFrom("198.51.100.7").post("/api/auth/forgot-password", obj{"email": "ada@example.com"})
	mustMessage(t, r, msgForgotSent)
	e.lastMail(t, "ada@example.com", mail.KindResetPassword)
	if n := e.mailCount(t); n != 1 {
		t.Errorf("%d mails, want only ada's reset link", n)
	}
	if got := e.audit.Details(auth.EventLimitStoreFull); !slices.Equal(got, []string{"reset:email"}) {
		t.Errorf("limit_store_full events %q, want [reset:email]", got)
	}
	if ev, ok := e.audit.Last(auth.EventPasswordResetRequested); !ok || ev.UserID == "" {
		t.Errorf("no password_reset_requested event for ada")
	}
}

func (s suite) fullAddressStore(t *testing.T) {
	// The spec's rule, kept for keys that cost an attacker an address
	// each: those it holds keep their own counts.
	e := s.env(t, trustAll, smallStores)
	e.seed(t, "ada@example.com")
	begin := e.clock.Now()
	for i := range 3 {
		c := e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1))
		mustStatus(t, c.login(fmt.Sprintf("user%d@example.com", i), wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
		e.clock.Advance(time.Second)
	}
	r := e.clientFrom("198.51.100.7").login("ada@example.com", goodPassword)
	e.mustLimited(t, r, msgTooManyLogins, begin.Add(15*time.Minute)) // when the oldest entry expires
	if got := e.audit.Details(auth.EventLimitStoreFull); !slices.Equal(got, []string{"login:ip"}) {
		t.Errorf("limit_store_full events %q, want [login:ip]", got)
	}
	mustLogin(t, e.clientFrom("203.0.113.1"), "ada@example.com", goodPassword)
	// The forgot-password address limit follows the same rule.
	for i := range 3 {
		mustMessage(t, e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1)).post("/api/auth/forgot-password", obj{"email": "x@example.com"}), msgForgotSent)
	}
	e.mustLimited(t, e.clientFrom("198.51.100.7").post("/api/auth/forgot-password", obj{"email": "ada@example.com"}),
		msgTooManyResets, e.clock.Now().Add(15*time.Minute))
}

package authtest

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clientip"
)

// oneLogin allows one login a window per address, and any number per
// email.
func oneLogin(c *auth.Config) {
	c.Limits.LoginIP = auth.Limit{Max: 1, Window: 15 * time.Minute}
	c.Limits.LoginEmail = auth.Off
}

// loopback trusts the proxies on 127.0.0.0/8, where the tests' browsers
// connect from.
func loopback(c *auth.Config) { c.Proxies = clientip.New(netip.MustParsePrefix("127.0.0.0/8")) }

// lastIP returns the client address of the last failed login.
func lastIP(t *testing.T, e *env) string {
	t.Helper()
	ev, ok := e.audit.Last(auth.EventLoginFailed)
	if !ok {
		t.Fatalf("no login_failed event")
	}
	return ev.IP
}

func (s suite) ipUntrustedPeer(t *testing.T) {
	e := s.env(t, oneLogin)
	mustStatus(t, e.clientFrom("203.0.113.1").login("a@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	if ip := lastIP(t, e); ip != "127.0.0.1" {
		t.Errorf("client address %q, want the socket's 127.0.0.1", ip)
	}
	e.mustLimited(t, e.clientFrom("203.0.113.2").login("b@example.com", wrongPassword), msgTooManyLogins, start.Add(15*time.Minute))
	e.mustLimited(t, e.client().login("c@example.com", wrongPassword), msgTooManyLogins, start.Add(15*time.Minute))
}

func (s suite) ipTrustedProxy(t *testing.T) {
	e := s.env(t, oneLogin, loopback)
	mustStatus(t, e.clientFrom("203.0.113.1").login("a@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	if ip := lastIP(t, e); ip != "203.0.113.1" {
		t.Errorf("client address %q, want 203.0.113.1", ip)
	}
	// Another client has its own key.
	mustStatus(t, e.clientFrom("203.0.113.2").login("b@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	// A trusted hop on the right is skipped.
	mustStatus(t, e.clientFrom("203.0.113.3, 127.0.0.9").login("c@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	if ip := lastIP(t, e); ip != "203.0.113.3" {
		t.Errorf("client address %q, want 203.0.113.3 (127.0.0.9 is a trusted proxy)", ip)
	}
	// Prepending entries on the left does not escape the limit.
	for _, xff := range []string{"203.0.113.1", "198.51.100.7, 203.0.113.1", "10.9.9.9, 198.51.100.8, 203.0.113.1"} {
		e.mustLimited(t, e.clientFrom(xff).login("d@example.com", wrongPassword), msgTooManyLogins, start.Add(15*time.Minute))
	}
}

func (s suite) ipTrustAll(t *testing.T) {
	e := s.env(t, oneLogin, trustAll)
	mustStatus(t, e.clientFrom("198.51.100.7, 203.0.113.1").login("a@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	if ip := lastIP(t, e); ip != "198.51.100.7" {
		t.Errorf("client address %q, want the leftmost 198.51.100.7", ip)
	}
	e.mustLimited(t, e.clientFrom("198.51.100.7").login("b@example.com", wrongPassword), msgTooManyLogins, start.Add(15*time.Minute))
	mustStatus(t, e.clientFrom("203.0.113.1").login("c@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
}

func (s suite) ipIPv6Prefix(t *testing.T) {
	e := s.env(t, oneLogin, trustAll)
	mustStatus(t, e.clientFrom("2001:db8:1:2::1").login("a@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	e.mustLimited(t, e.clientFrom("2001:db8:1:2:ffff::9").login("b@example.com", wrongPassword), msgTooManyLogins, start.Add(15*time.Minute))
	mustStatus(t, e.clientFrom("2001:db8:1:3::1").login("c@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
}

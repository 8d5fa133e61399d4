package browsertest

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestFrontEndOnAnotherOrigin runs examples/jsononly as its README's
// "front end on another origin" describes, in Chromium: the API on one
// origin (FRONTEND_ORIGINS names the front end's), the front end served
// from another of the same site (API_URL names the API's), here two ports
// of 127.0.0.1. The front end's script signs in across origins with
// credentials; the session cookie the API set is sent again on the next
// page load; signing out ends it. The page records no console error and
// no refused request (CORS or CSP).
func TestFrontEndOnAnotherOrigin(t *testing.T) {
	Chromium(t)
	front := "http://" + freeAddr(t)
	api := servertest.Start(t, "jsononly", "FRONTEND_ORIGINS="+front, "APP_URL="+front)
	servertest.Start(t, "jsononly", "ADDR="+strings.TrimPrefix(front, "http://"), "API_URL="+api.URL)

	// The account, registered through the API as any client would.
	res, err := http.Post(api.URL+"/api/auth/register", "application/json",
		strings.NewReader(`{"email":"ada@example.com","password":"correct horse battery","name":"Ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("register: %d", res.StatusCode)
	}

	b := New(t, "spa-second-origin")
	b.Open(front + "/app/")
	b.WaitText("status", "Not signed in.")
	b.Shot("signed-out")
	b.Fill("email", "ada@example.com")
	b.Fill("login-password", "wrong password")
	b.Submit("login-form")
	b.WaitText("status", "Invalid credentials")
	b.Fill("login-password", "correct horse battery")
	b.Submit("login-form")
	b.WaitText("status", "Signed in as ada@example.com")
	b.Shot("signed-in")
	if c := b.Cookie("authkit_session"); c == nil || c.Domain != "127.0.0.1" || !c.HTTPOnly {
		t.Fatalf("the API's session cookie: %+v, want a host-only HttpOnly cookie of 127.0.0.1", c)
	}
	// A new page load: the cookie goes with the cross-origin call again.
	b.Open(front + "/app/")
	b.WaitText("status", "Signed in as ada@example.com")
	if !b.Visible("logout-form") || b.Visible("login-form") {
		t.Error("signed in, the page shows the wrong form")
	}
	b.Submit("logout-form")
	b.WaitText("status", "Not signed in.")
	b.Shot("signed-out-again")
	if !strings.HasPrefix(b.Location(), front+"/app/") {
		t.Errorf("the front end left its origin: at %s", b.Location())
	}
}

// freeAddr returns a loopback address with a port nothing listens on now,
// for a server whose origin another must know before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr())
}

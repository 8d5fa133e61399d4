package auth

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
)

// countingRequest counts how often a flow reads the request parts that
// say who the client is.
type countingRequest struct {
	*fakeRequest
	remote  int
	headers map[string]int
}

func (c *countingRequest) RemoteAddr() string {
	c.remote++
	return c.fakeRequest.RemoteAddr()
}

func (c *countingRequest) Header(name string) string {
	c.headers[name]++
	return c.fakeRequest.Header(name)
}

// TestVisitResolvesClientOnce: the client's address (the socket peer and
// X-Forwarded-For, through Config.Proxies) and its User-Agent are read
// once per request however many parts of a flow use them. The second step
// of a login that trusts the browser uses them six times over (the 2FA
// limit's audit, the session record, the trusted-device record, the
// new-device event and its mail), and reads each once; every request of
// the login reads each at most once. What they resolved to is what the
// records, the event and the mail show.
func TestVisitResolvesClientOnce(t *testing.T) {
	sessions := store.NewMemorySessions(store.MemoryConfig{})
	trusted := store.NewMemorySessions(store.MemoryConfig{})
	f := newFlow(t, func(c *Config) {
		c.Sessions, c.TrustedDevices = sessions, trusted
		c.Proxies = clientip.New(netip.MustParsePrefix("192.0.2.0/24"))
	})
	b, u := f.register("ada@example.com", goodPW)
	ctx := context.Background()
	code, _ := f.enableTOTP(b)

	nb := newBrowser()
	nb.headers["X-Forwarded-For"] = "203.0.113.50"
	counted := func(name string, call func(v *Visit) error) *countingRequest {
		t.Helper()
		req := &countingRequest{fakeRequest: &fakeRequest{method: "POST", remote: "192.0.2.7:4711", headers: nb.headers, cookies: map[string]string{}}, headers: map[string]int{}}
		for k, c := range nb.cookies {
			req.cookies[k] = c
		}
		v := f.s.Visit(req)
		if err := call(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nb.keep(v)
		if req.remote > 1 || req.headers["X-Forwarded-For"] > 1 || req.headers["User-Agent"] > 1 {
			t.Errorf("%s read RemoteAddr %d times, X-Forwarded-For %d, User-Agent %d; want at most once each",
				name, req.remote, req.headers["X-Forwarded-For"], req.headers["User-Agent"])
		}
		return req
	}
	counted("login", func(v *Visit) error {
		_, err := f.s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: goodPW})
		return err
	})
	req := counted("2fa verify", func(v *Visit) error {
		_, err := f.s.VerifyTwoFactor(ctx, v, TwoFactorInput{Code: code(), TrustDevice: true})
		return err
	})
	if req.remote != 1 || req.headers["X-Forwarded-For"] != 1 || req.headers["User-Agent"] != 1 {
		t.Errorf("2fa verify read RemoteAddr %d times, X-Forwarded-For %d, User-Agent %d; want once each",
			req.remote, req.headers["X-Forwarded-For"], req.headers["User-Agent"])
	}

	const addr, ua = "203.0.113.50", "TestBrowser/1.0"
	for name, st := range map[string]*store.MemorySessions{"session": sessions, "trusted device": trusted} {
		recs, err := st.List(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, r := range recs {
			found = found || (r.IP == addr && r.UserAgent == ua)
		}
		if !found {
			t.Errorf("no %s record of %s with %s: %+v", name, addr, ua, recs)
		}
	}
	if ev, ok := f.event(EventNewDeviceSignIn); !ok || ev.IP != addr || ev.Detail != ua {
		t.Errorf("new-device event %+v, want IP %s and %s", ev, addr, ua)
	}
	notices := f.mails(mail.KindNewSignIn)
	if len(notices) != 1 || !strings.Contains(notices[0].Text, addr) || !strings.Contains(notices[0].Text, ua) {
		t.Errorf("new sign-in notices %d, want one naming %s and %s", len(notices), addr, ua)
	}
}

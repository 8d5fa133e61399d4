package auth

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// flow is a Service over a memory store with a settable clock, a captured
// mailer and an audit log, for unit tests of the typed methods; a browser
// is the cookie jar its visits share.
type flow struct {
	t      *testing.T
	s      *Service
	now    time.Time
	mail   *mail.Capture
	events []Event
}

var flowStart = time.Date(2031, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

func newFlow(t *testing.T, change func(*Config)) *flow {
	t.Helper()
	f := &flow{t: t, now: flowStart, mail: &mail.Capture{}}
	f.s = mustNewWith(t, func(c *Config) {
		c.Users = store.NewMemory(store.MemoryConfig{})
		c.Now = func() time.Time { return f.now }
		c.Mailer = f.mail
		c.Audit = func(_ context.Context, e Event) { f.events = append(f.events, e) }
		if change != nil {
			change(c)
		}
	})
	return f
}

// browser is one client's cookies, carried from visit to visit.
type browser struct {
	cookies map[string]string
	headers map[string]string
}

func newBrowser() *browser {
	return &browser{cookies: map[string]string{}, headers: map[string]string{"Content-Type": "application/json", "User-Agent": "TestBrowser/1.0"}}
}

// visit makes the visit of one request of b; keep stores its cookies in b.
func (f *flow) visit(b *browser) *Visit {
	req := &fakeRequest{method: http.MethodPost, remote: "192.0.2.7:4711", headers: b.headers, cookies: map[string]string{}}
	for k, v := range b.cookies {
		req.cookies[k] = v
	}
	return f.s.Visit(req)
}

// keep stores the cookies v's answer sets in b.
func (b *browser) keep(v *Visit) {
	for _, c := range v.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
}

// do runs one typed call on a visit of b and keeps its cookies.
func (f *flow) do(b *browser, call func(v *Visit) error) error {
	v := f.visit(b)
	err := call(v)
	b.keep(v)
	return err
}

// register signs email up on a new browser with password pw.
func (f *flow) register(email, pw string) (*browser, *user.User) {
	f.t.Helper()
	b := newBrowser()
	var u *user.User
	err := f.do(b, func(v *Visit) (err error) {
		u, err = f.s.Register(context.Background(), v, RegisterInput{Email: email, Password: pw, Name: "Ada"})
		return err
	})
	if err != nil {
		f.t.Fatalf("Register: %v", err)
	}
	return b, u
}

// event returns the last event of typ.
func (f *flow) event(typ EventType) (Event, bool) {
	for i := len(f.events) - 1; i >= 0; i-- {
		if f.events[i].Type == typ {
			return f.events[i], true
		}
	}
	return Event{}, false
}

// enableTOTP turns TOTP on for b's user through the setup and confirm
// steps, then moves the clock past the step the confirmation used. It
// returns a function giving the code of the moment, and the recovery
// codes.
func (f *flow) enableTOTP(b *browser) (code func() string, recoveryCodes []string) {
	f.t.Helper()
	ctx := context.Background()
	var setup TwoFactorSetup
	if err := f.do(b, func(v *Visit) (err error) { setup, err = f.s.SetupTwoFactor(ctx, v); return err }); err != nil {
		f.t.Fatal(err)
	}
	uri, err := url.Parse(setup.URI)
	if err != nil {
		f.t.Fatal(err)
	}
	secret := uri.Query().Get("secret")
	code = func() string {
		f.t.Helper()
		c, err := f.s.totp.Code(secret, f.now)
		if err != nil {
			f.t.Fatal(err)
		}
		return c
	}
	if err := f.do(b, func(v *Visit) (err error) {
		recoveryCodes, err = f.s.ConfirmTwoFactor(ctx, v, ConfirmTwoFactorInput{Code: code()})
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute)
	return code, recoveryCodes
}

// mails returns the mails of kind sent so far.
func (f *flow) mails(kind mail.Kind) []mail.Message {
	f.t.Helper()
	if err := f.s.FlushMail(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	var out []mail.Message
	for _, m := range f.mail.Messages() {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

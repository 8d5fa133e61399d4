package fiberauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/fiberauth"
)

// recordingStore is a user store that records the address of every
// account created.
type recordingStore struct {
	user.Store
	mu      sync.Mutex
	created []string
}

func (s *recordingStore) Create(ctx context.Context, u *user.User) (*user.User, error) {
	got, err := s.Store.Create(ctx, u)
	if err == nil {
		s.mu.Lock()
		s.created = append(s.created, got.Email)
		s.mu.Unlock()
	}
	return got, err
}

// TestConcurrentRegistrations runs many registrations at once over a few
// keep-alive connections, so fasthttp reuses each request's buffers for
// the next while core still holds what it read (the mail is rendered on
// the sender's goroutine). A string handed to core without a copy shows
// up as a mail, a name, a link or a session that belongs to another
// request.
func TestConcurrentRegistrations(t *testing.T) {
	const n = 200
	users := &recordingStore{Store: store.NewMemory(store.MemoryConfig{})}
	big := auth.Limit{Max: 10 * n, Window: time.Hour}
	svc, mailer := authtest.NewService(t, users, func(c *auth.Config) {
		c.Limits = auth.Limits{Register: big, Resend: big}
	})
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	base := serve(t, app)
	tr := &http.Transport{MaxConnsPerHost: 8, MaxIdleConnsPerHost: 8}
	t.Cleanup(tr.CloseIdleConnections)

	// Lengths differ from one request to the next, so a stale slice reads
	// a mix of two requests.
	email := func(i int) string { return fmt.Sprintf("user%d%s@example.com", i, strings.Repeat("x", i%17)) }
	name := func(i int) string { return fmt.Sprintf("Name %d%s", i, strings.Repeat("y", (i*7)%23)) }

	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Transport: tr, Jar: jar}
			body := fmt.Sprintf(`{"email":%q,"password":"correct horse battery staple","name":%q}`, email(i), name(i))
			r, err := authtest.Fetch(c, http.MethodPost, base+"/api/auth/register", body)
			if err != nil || r.Status != http.StatusOK {
				errs <- fmt.Errorf("register %d: %d %s %v", i, r.Status, r.Body, err)
				return
			}
			// The session cookie is this request's user.
			r, err = authtest.Fetch(c, http.MethodGet, base+"/api/auth/me", "")
			if err != nil || r.Status != http.StatusOK || r.JSON["email"] != email(i) || r.JSON["name"] != name(i) {
				errs <- fmt.Errorf("me after register %d: %d %s %v", i, r.Status, r.Body, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if err := svc.FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}

	// One verification mail per request, each with its own address, name
	// and link.
	msgs := mailer.Messages()
	if len(msgs) != n {
		t.Fatalf("%d mails, want %d", len(msgs), n)
	}
	byTo := map[string]mail.Message{}
	for _, m := range msgs {
		byTo[m.To] = m
	}
	want := map[string]bool{}
	for i := range n {
		want[email(i)] = true
		m, ok := byTo[email(i)]
		if !ok {
			t.Errorf("no mail to %s", email(i))
			continue
		}
		if m.Kind != mail.KindVerifyEmail || !strings.Contains(m.Text, "Hi "+name(i)+",") ||
			!strings.HasPrefix(m.Link, "http://app.test/verify-email/") {
			t.Errorf("mail to %s: kind %s, link %q, text %q", m.To, m.Kind, m.Link, m.Text)
		}
	}
	users.mu.Lock()
	created := append([]string(nil), users.created...)
	users.mu.Unlock()
	if len(created) != n {
		t.Errorf("store: %d accounts created, want %d", len(created), n)
	}
	for _, e := range created {
		if !want[e] {
			t.Errorf("store: account %q was never asked for", e)
		}
	}

	// Each link verifies the account it was mailed for: the token binds
	// the user and the address.
	errs = make(chan error, n)
	for i := range n {
		wg.Go(func() {
			link := byTo[email(i)].Link
			r, err := authtest.Fetch(&http.Client{Transport: tr}, http.MethodGet,
				base+"/api/auth/verify-email/"+strings.TrimPrefix(link, "http://app.test/verify-email/"), "")
			if err != nil || r.Status != http.StatusOK {
				errs <- fmt.Errorf("verify %s: %d %s %v", email(i), r.Status, r.Body, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		u, err := users.ByEmail(context.Background(), email(i))
		if err != nil {
			t.Errorf("store: %s: %v", email(i), err)
			continue
		}
		if u.Name != name(i) || !u.EmailVerified() {
			t.Errorf("store: %s: name %q, verified %v; want %q, true", email(i), u.Name, u.EmailVerified(), name(i))
		}
	}
}

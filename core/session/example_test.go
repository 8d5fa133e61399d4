package session_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// jar is a toy CookieBridge that plays both the browser and the server:
// what is set is sent back on the next call to Get.
type jar map[string]string

func (j jar) Set(name, value string, opts session.CookieOptions) {
	j[name] = value
	fmt.Printf("Set-Cookie %s HttpOnly=%v Secure=%v MaxAge=%d\n", name, opts.HTTPOnly, opts.Secure, opts.MaxAge)
}

func (j jar) Get(name string) (string, bool) {
	v, ok := j[name]
	return v, ok
}

func (j jar) Delete(name string, _ session.CookieOptions) {
	delete(j, name)
	fmt.Printf("Set-Cookie %s expired\n", name)
}

func ExampleManager() {
	ada := &user.User{ID: "u-ada", Email: "ada@example.com"}
	users := map[string]*user.User{ada.ID: ada}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

	m, err := session.New(session.Config{
		Secrets: []string{"an example secret of at least 32 bytes, never use it"},
		ResolveUser: func(_ context.Context, id string) (*user.User, error) {
			return users[id], nil // nil, nil when there is no such user
		},
		Now: func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	browser := jar{}

	// Request 1 logs in.
	if err := m.Session(browser).Login(ctx, ada, false); err != nil {
		panic(err)
	}

	// Request 2 reads the session.
	u, err := m.Session(browser).User(ctx)
	fmt.Println(u.Email, err)

	// A day later the browser-session cookie is no longer accepted.
	now = now.Add(24 * time.Hour)
	_, err = m.Session(browser).User(ctx)
	fmt.Println(errors.Is(err, session.ErrNotAuthenticated))

	// Output:
	// Set-Cookie authkit_session HttpOnly=true Secure=true MaxAge=0
	// ada@example.com <nil>
	// Set-Cookie authkit_session expired
	// true
}

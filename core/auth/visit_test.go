package auth

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestVisitCookie: Cookie reads the request's cookies; SetCookie adds one
// to the answer, a second of the same name, path and domain replacing the
// first, one of another path kept beside it.
func TestVisitCookie(t *testing.T) {
	f := newFlow(t, nil)
	b := newBrowser()
	b.cookies["app_state"] = "abc"
	v := f.visit(b)
	if got, ok := v.Cookie("app_state"); !ok || got != "abc" {
		t.Fatalf("Cookie(app_state) = %q, %v; want abc, true", got, ok)
	}
	if got, ok := v.Cookie("missing"); ok || got != "" {
		t.Fatalf("Cookie(missing) = %q, %v; want \"\", false", got, ok)
	}
	v.SetCookie(&http.Cookie{Name: "app_state", Value: "one", Path: "/x"})
	v.SetCookie(&http.Cookie{Name: "app_state", Value: "two", Path: "/x", HttpOnly: true})
	v.SetCookie(&http.Cookie{Name: "app_state", Value: "other", Path: "/y"})
	cs := v.Cookies()
	if len(cs) != 2 || cs[0].Value != "two" || !cs[0].HttpOnly || cs[1].Value != "other" {
		t.Fatalf("Cookies() = %v, want app_state=two on /x then app_state=other on /y", cs)
	}
}

// TestRateLimitAttempt: each attempt puts the headers on the visit; the
// one over the limit fails with the 429 *Error, RetryAfter at the window's
// end, and is audited.
func TestRateLimitAttempt(t *testing.T) {
	f := newFlow(t, nil)
	rl, err := f.s.NewRateLimit("test:attempt", Limit{Max: 2, Window: time.Minute}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	ctx := context.Background()
	for i, remaining := range []string{"1", "0"} {
		v := f.visit(newBrowser())
		if err := rl.Attempt(ctx, v); err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		if got := v.Header().Get("X-RateLimit-Remaining"); got != remaining {
			t.Fatalf("attempt %d: X-RateLimit-Remaining %q, want %s", i+1, got, remaining)
		}
	}
	v := f.visit(newBrowser())
	err = rl.Attempt(ctx, v)
	var e *Error
	if !errors.As(err, &e) || e.Status != 429 || e.Code != "too_many_requests" || e.Message != "Too many requests. Try again later." ||
		!e.RetryAfter.Equal(flowStart.Add(time.Minute)) {
		t.Fatalf("third attempt: %#v, want the 429 too_many_requests until %v", err, flowStart.Add(time.Minute))
	}
	if v.Header().Get("Retry-After") != "60" || v.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("headers of the refused attempt: %v", v.Header())
	}
	if ev, ok := f.event(EventRateLimited); !ok || ev.Detail != "app:test:attempt" {
		t.Errorf("audit: %+v, want %s of app:test:attempt", ev, EventRateLimited)
	}
}

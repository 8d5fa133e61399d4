package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// limitNames are the names RATE_LIMITS takes: the limits' key prefixes
// (login:ip:<address>, ...), as `authkit limits reset --key` takes them.
var limitNames = map[string]func(*auth.Limits) *auth.Limit{
	"login:ip":    func(l *auth.Limits) *auth.Limit { return &l.LoginIP },
	"login:email": func(l *auth.Limits) *auth.Limit { return &l.LoginEmail },
	"register":    func(l *auth.Limits) *auth.Limit { return &l.Register },
	"reset:ip":    func(l *auth.Limits) *auth.Limit { return &l.ResetIP },
	"reset:email": func(l *auth.Limits) *auth.Limit { return &l.ResetEmail },
	"resend":      func(l *auth.Limits) *auth.Limit { return &l.Resend },
	"2fa":         func(l *auth.Limits) *auth.Limit { return &l.TwoFactor },
	"password":    func(l *auth.Limits) *auth.Limit { return &l.Password },
	"email-code":  func(l *auth.Limits) *auth.Limit { return &l.EmailCode },
}

// parseLimits reads RATE_LIMITS: comma-separated name=max/window
// ("register=50/1h") or name=off ("login:ip=off"); the limits it does not
// name keep their defaults.
func parseLimits(s string) (auth.Limits, error) {
	var l auth.Limits
	if s == "" {
		return l, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		field := limitNames[name]
		switch {
		case !ok || field == nil:
			return l, fmt.Errorf("RATE_LIMITS: %q is not name=max/window or name=off (names: login:ip, login:email, register, reset:ip, reset:email, resend, 2fa, password, email-code)", item)
		case seen[name]:
			return l, fmt.Errorf("RATE_LIMITS: %s is set twice", name)
		}
		seen[name] = true
		if value == "off" {
			*field(&l) = auth.Off
			continue
		}
		maxText, windowText, ok := strings.Cut(value, "/")
		n, err := strconv.Atoi(maxText)
		var w time.Duration
		if err == nil && ok {
			w, err = time.ParseDuration(windowText)
		}
		if !ok || err != nil || n < 1 || w < time.Second {
			return l, fmt.Errorf("RATE_LIMITS: %s=%s: want max/window, such as 50/1h (max at least 1, window at least 1s), or off", name, value)
		}
		*field(&l) = auth.Limit{Max: n, Window: w}
	}
	return l, nil
}

// parseCapacity reads RATE_LIMIT_CAPACITY: the keys each in-memory limit
// store holds; empty: the default.
func parseCapacity(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("RATE_LIMIT_CAPACITY: %q is not a positive number of keys", s)
	}
	return n, nil
}

// parseIdle reads SESSION_IDLE_TIMEOUT: a Go duration of at least a
// minute (the last use of a session is written once a minute), "off" for
// none (-1), or empty for authkit's default (0: 30 minutes).
func parseIdle(s string) (time.Duration, error) {
	switch s {
	case "":
		return 0, nil // auth.DefaultSessionIdleTimeout
	case "off":
		return -1, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("SESSION_IDLE_TIMEOUT: %q is not a duration of at least 1m (such as 30m or 8h) or off", s)
	}
	return d, nil
}

package password

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrBreached means a password is known to attackers: it appeared in a
// data breach, or it is on a list of common passwords. Registration, reset
// and change refuse it (core/auth: 400 "password_breached").
var ErrBreached = errors.New("password: known from a data breach or too common")

// Checker tells whether a new password is known to attackers (ASVS 2.1.7,
// NIST SP 800-63B 5.1.1.2). core/auth consults one, when configured, on
// registration, password reset and password change.
type Checker interface {
	// Check returns ErrBreached (or an error wrapping it) when pw is
	// known, nil when it is not, and any other error when it could not
	// tell (a service that did not answer, a canceled ctx); the caller
	// decides what an unknown answer means. pw is the password as the
	// user gave it; a Checker compares its normal form ([Normalize]), the
	// form that is hashed. An error never holds pw or anything derived
	// from it. Check must be safe for concurrent use.
	Check(ctx context.Context, pw string) error
}

// List is a [Checker] over a list of common passwords the app supplies
// (for example the 100,000 most common ones of a breach corpus, or words
// particular to the app such as its own name). Entries and passwords are
// compared case-insensitively after [Normalize], so "Password1" matches an
// entry "password1" and a fullwidth "ｐａｓｓｗｏｒｄ" matches "password".
// The list is public data: membership is a map lookup, not a
// constant-time comparison. A List is safe for concurrent use.
type List struct {
	words map[string]struct{}
}

var _ Checker = (*List)(nil)

// NewList returns a List of words. Empty entries are ignored.
func NewList(words []string) *List {
	l := &List{words: make(map[string]struct{}, len(words))}
	for _, w := range words {
		if k := listKey(w); k != "" {
			l.words[k] = struct{}{}
		}
	}
	return l
}

// ReadList returns a List of the lines of r: one password a line, with
// surrounding white space trimmed; empty lines and lines that start with
// '#' are skipped. Lines may be up to 1 MiB long.
func ReadList(r io.Reader) (*List, error) {
	var words []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		w := strings.TrimSpace(sc.Text())
		if w == "" || strings.HasPrefix(w, "#") {
			continue
		}
		words = append(words, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("password: read list: %w", err)
	}
	return NewList(words), nil
}

// Len returns the number of distinct entries.
func (l *List) Len() int { return len(l.words) }

// Check returns ErrBreached when pw is on the list, compared as the
// package documentation of List says, and nil otherwise.
func (l *List) Check(_ context.Context, pw string) error {
	if _, ok := l.words[listKey(pw)]; ok {
		return ErrBreached
	}
	return nil
}

// listKey is the form List compares: normalised as the hasher does, then
// lower-cased.
func listKey(pw string) string { return strings.ToLower(Normalize(pw)) }

// AnyOf returns a Checker that consults each of checkers in order: a
// password is breached when any of them says so (the later ones are then
// not asked). When none does and some could not tell, Check returns their
// errors joined; nil checkers are skipped.
func AnyOf(checkers ...Checker) Checker {
	var cs anyOf
	for _, c := range checkers {
		if c != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

type anyOf []Checker

func (cs anyOf) Check(ctx context.Context, pw string) error {
	var errs []error
	for _, c := range cs {
		err := c.Check(ctx, pw)
		switch {
		case err == nil:
		case errors.Is(err, ErrBreached):
			return err
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

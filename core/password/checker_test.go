package password

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestList: entries match case-insensitively after normalisation; empty
// and comment lines of a file are skipped.
func TestList(t *testing.T) {
	l, err := ReadList(strings.NewReader("# common passwords\n\nPassword1\n  letmein  \nＱｗｅｒｔｙ123\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 3 {
		t.Errorf("Len = %d, want 3", l.Len())
	}
	ctx := context.Background()
	for pw, breached := range map[string]bool{
		"password1":          true,
		"PASSWORD1":          true,
		"ｐａｓｓｗｏｒｄ1":          true, // fullwidth, NFKC "password1"
		"letmein":            true,
		"qwerty123":          true,
		"letmein ":           false, // passwords are not trimmed: the space is part of it
		"# common passwords": false,
		"":                   false,
		"password12":         false,
	} {
		err := l.Check(ctx, pw)
		if got := errors.Is(err, ErrBreached); got != breached || (!breached && err != nil) {
			t.Errorf("Check(%q) = %v, want breached %v", pw, err, breached)
		}
	}
	if NewList([]string{"", "a", "A"}).Len() != 1 {
		t.Error("NewList kept an empty entry or a case duplicate")
	}
}

type fixed struct {
	err   error
	calls *int
}

func (f fixed) Check(context.Context, string) error { *f.calls++; return f.err }

// TestAnyOf: breached when any says so (later ones not asked); the
// errors of those that could not tell otherwise; nil when all say no.
func TestAnyOf(t *testing.T) {
	down := errors.New("service down")
	var n1, n2, n3 int
	ctx := context.Background()
	if err := AnyOf(fixed{down, &n1}, fixed{ErrBreached, &n2}, fixed{nil, &n3}).Check(ctx, "x"); !errors.Is(err, ErrBreached) || n3 != 0 {
		t.Errorf("down, breached, fine: %v (third asked %d times), want ErrBreached, third not asked", err, n3)
	}
	if err := AnyOf(fixed{down, &n1}, nil, fixed{nil, &n3}).Check(ctx, "x"); !errors.Is(err, down) || errors.Is(err, ErrBreached) {
		t.Errorf("down, fine: %v, want the error", err)
	}
	if err := AnyOf(fixed{nil, &n1}, fixed{nil, &n2}).Check(ctx, "x"); err != nil {
		t.Errorf("fine, fine: %v", err)
	}
	if err := AnyOf().Check(ctx, "x"); err != nil {
		t.Errorf("none: %v", err)
	}
}

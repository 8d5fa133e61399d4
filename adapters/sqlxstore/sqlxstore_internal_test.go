package sqlxstore

import (
	"errors"
	"strings"
	"testing"
)

func TestTablePrefix(t *testing.T) {
	for prefix, ok := range map[string]bool{
		"":                      true, // the default
		"app_":                  true,
		"_x9":                   true,
		"a":                     true,
		"9app_":                 false,
		"App_":                  false,
		"app-":                  false,
		"app.users":             false,
		"x; DROP TABLE y; --":   false,
		strings.Repeat("a", 32): true,
		strings.Repeat("a", 33): false,
	} {
		_, err := newDB(nil, SQLite, Config{TablePrefix: prefix})
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("TablePrefix %q: err = %v, want ok=%v", prefix, err, ok)
		}
	}
}

package sqlxopen_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
)

// TestOpenMalformedURL: a URL the driver cannot parse is an invalid
// configuration (the CLI's exit 2), not an unreachable server, and the
// error does not hold the password.
func TestOpenMalformedURL(t *testing.T) {
	for _, u := range []string{
		"postgres://ada:s3cret@%zz/db",
		"postgres://ada:s3cret@host:notaport/db",
		"postgres://ada:s3cret@host/db?sslmode=bogus",
		"mysql://ada:s3cret@host:99999/db",
		"mysql://ada:s3cret@host:0/db",
	} {
		_, err := sqlxopen.Open(t.Context(), u, sqlxstore.Config{})
		if !errors.Is(err, sqlxstore.ErrInvalidConfig) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%s) = %v, want ErrInvalidConfig without the password", u, err)
		}
	}
}

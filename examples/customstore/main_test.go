package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesWithoutSecrets: the server never makes up keys for accounts
// that outlive it.
func TestRefusesWithoutSecrets(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"SESSION_SECRET": strings.Repeat("s", 32)},
		{"ENCRYPTION_KEY": "ak1_x"},
	} {
		env["ACCOUNTS_DB"] = filepath.Join(t.TempDir(), "app.db")
		var stderr strings.Builder
		code := run(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard, &stderr)
		const want = "authkit example (customstore): SESSION_SECRET and ENCRYPTION_KEY are required " +
			"(go run ./cmd/authkit session-secret; go run ./cmd/authkit encryption-key)\n"
		if code != 1 || stderr.String() != want {
			t.Errorf("run with %v: exit %d, stderr %q; want 1, %q", env, code, stderr.String(), want)
		}
		if _, err := os.Stat(env["ACCOUNTS_DB"]); !os.IsNotExist(err) {
			t.Errorf("run with %v created the database before refusing: %v", env, err)
		}
	}
}

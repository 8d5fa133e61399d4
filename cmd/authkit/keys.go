package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"

	"github.com/authkit-go/authkit/core/secretbox"
)

var encryptionKeyCmd = &command{
	name:    "encryption-key",
	summary: "print a new key for ENCRYPTION_KEY",
	help: `Prints a new random key for ENCRYPTION_KEY, which encrypts the TOTP secrets
stored in the database:

	export ENCRYPTION_KEY="$(authkit encryption-key)"

The key is "ak1_" followed by 32 random bytes in unpadded base64url.

To rotate, generate a new key and put it first, keeping the old one after a
comma until every stored value has been re-encrypted:

	ENCRYPTION_KEY=<new key>,<old key>

Keep the key secret and backed up. Without it the stored TOTP secrets cannot
be decrypted: users with two-factor authentication would have to sign in with
a recovery code and set it up again.
`,
	run: runEncryptionKey,
}

func runEncryptionKey(_ context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	if exit, ok := c.parseFlags(flag.NewFlagSet(c.name, flag.ContinueOnError), args, stdout, stderr); !ok {
		return exit
	}
	key, err := secretbox.GenerateKey()
	return c.printSecret(key, err, stdout, stderr)
}

var sessionSecretCmd = &command{
	name:    "session-secret",
	summary: "print a new secret for SESSION_SECRET",
	help: `Prints a new random secret for SESSION_SECRET, which signs session cookies and
the tokens in email verification and password reset links:

	export SESSION_SECRET="$(authkit session-secret)"

The secret is 32 random bytes in unpadded base64url (43 characters).

To rotate, put a new secret first and keep the old one after a comma until the
longest-lived tokens signed with it have expired (30 days for remembered
sessions). Replacing it outright signs everyone out and voids every link
already mailed.
`,
	run: runSessionSecret,
}

func runSessionSecret(_ context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	if exit, ok := c.parseFlags(flag.NewFlagSet(c.name, flag.ContinueOnError), args, stdout, stderr); !ok {
		return exit
	}
	secret := make([]byte, 32)
	rand.Read(secret) // never fails: Go 1.24+ crashes the program instead
	return c.printSecret(base64.RawURLEncoding.EncodeToString(secret), nil, stdout, stderr)
}

// printSecret writes a generated secret and a newline to stdout, or reports
// on stderr why there is none.
func (c *command) printSecret(secret string, err error, stdout, stderr io.Writer) int {
	if err == nil {
		_, err = fmt.Fprintln(stdout, secret)
	}
	if err != nil {
		fmt.Fprintf(stderr, "authkit %s: %v\n", c.name, err)
		return 1
	}
	return 0
}

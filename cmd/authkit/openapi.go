package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
)

var openAPICmd = &command{
	name:    "openapi",
	summary: "print the OpenAPI 3.1 document of authkit's JSON routes",
	usage:   "[-o file] [-session-cookie name]",
	help: `Prints the OpenAPI 3.1 document (JSON) of core's JSON routes as
auth.Service.OpenAPI builds it for a Service with every feature on and every
optional store (Config.Sessions, Config.TrustedDevices, Config.EmailCode), so
every route of core/auth is in it. An app's Service serves the document of
its own configuration (the example servers at GET /api/openapi.json): a
switched-off feature's routes are not in it, and a module's routes (the
passkeys module's, under /api/passkeys) are; this command, which does not
depend on the passkeys module, leaves those out.

	authkit openapi -o openapi.json

Flags:
	-o file               write the document to file instead of stdout
	-session-cookie name  the session cookie's name (Config.SessionCookie;
	                      default __Host-authkit_session, a Secure
	                      Service's; authkit_session with Insecure)
`,
	run: runOpenAPI,
}

func runOpenAPI(_ context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	out := fs.String("o", "", "")
	cookie := fs.String("session-cookie", auth.SecureSessionCookie, "")
	if exit, ok := c.parseFlags(fs, args, stdout, stderr); !ok {
		return exit
	}
	doc, err := everyRouteDocument(*cookie)
	if err != nil {
		fmt.Fprintf(stderr, "authkit openapi: %v\n", err)
		return 1
	}
	if *out == "" {
		if _, err := stdout.Write(doc); err != nil {
			fmt.Fprintf(stderr, "authkit openapi: %v\n", err)
			return 1
		}
		return 0
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintf(stderr, "authkit openapi: %v\n", err)
		return 1
	}
	return 0
}

// everyRouteDocument is the document of a Service with every route of
// core/auth, its session cookie named cookie. The Service's secrets are
// throwaway: the document does not depend on them.
func everyRouteDocument(cookie string) ([]byte, error) {
	secret, key := make([]byte, 32), make([]byte, secretbox.KeySize)
	rand.Read(secret) // never fails: Go 1.24+ crashes the program instead
	rand.Read(key)
	keys, err := secretbox.NewKeyring(key)
	if err != nil {
		return nil, err
	}
	svc, err := auth.New(auth.Config{
		Users:          store.NewMemory(store.MemoryConfig{}),
		Sessions:       store.NewMemorySessions(store.MemoryConfig{}),
		TrustedDevices: store.NewMemorySessions(store.MemoryConfig{}),
		EmailCode:      auth.EmailCodeConfig{Enabled: true},
		SessionCookie:  cookie,
		Secrets:        []string{base64.RawURLEncoding.EncodeToString(secret)},
		Keys:           keys,
		AppURL:         "http://localhost",
		Mailer:         &mail.Capture{},
		Logger:         slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = svc.Close(context.Background()) }()
	return svc.OpenAPI()
}

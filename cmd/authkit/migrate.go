package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/user"
)

var migrateCmd = &command{
	name:    "migrate",
	usage:   "[--database-url URL] [--table-prefix PREFIX]",
	summary: "create or upgrade authkit's tables",
	help: `Applies authkit's schema migrations to the database, creating or upgrading
the users and rate-limit tables. It is safe to run again, and safe when
several processes run it at once (it takes a database lock).

	authkit migrate --database-url postgres://user:pass@host:5432/app
	authkit migrate --database-url mysql://user:pass@host:3306/app
	authkit migrate --database-url sqlite://data/app.db

Without --database-url it reads DATABASE_URL. --table-prefix sets the prefix
of the table names (default "authkit_"), as sqlxstore.Config.TablePrefix does.
The example servers migrate on start; run this before deploying an app that
does not.
`,
	run: runMigrate,
}

func runMigrate(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "")
	prefix := fs.String("table-prefix", "", "")
	if exit, ok := c.parseFlags(fs, args, stdout, stderr); !ok {
		return exit
	}
	if *dbURL == "" {
		fmt.Fprintf(stderr, "authkit migrate: no database: pass --database-url or set DATABASE_URL\n")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db, err := sqlxstore.Open(ctx, *dbURL, sqlxstore.Config{TablePrefix: *prefix, CleanupInterval: -1})
	if err != nil {
		fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		if errors.Is(err, sqlxstore.ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		if errors.Is(err, user.ErrUnavailable) {
			fmt.Fprintf(stderr, "authkit migrate: the database is unreachable: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		}
		return 1
	}
	fmt.Fprintf(stdout, "authkit migrate: %s is up to date\n", db.Dialect())
	return 0
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/user"
)

var migrateCmd = &command{
	name:    "migrate",
	usage:   "[status] [--database-url URL] [--table-prefix PREFIX] [--users-table TABLE [mapping flags]] [--print [--dialect DIALECT]]",
	summary: "create or upgrade authkit's tables, or print their SQL",
	help: `Applies authkit's schema migrations to the database, creating or upgrading
the users and rate-limit tables, and prints one line per migration it
applied ("applied 0001_init"), or "up to date" when there was none. It is
safe to run again, and safe when several processes run it at once (it takes
a database lock).

	authkit migrate --database-url postgres://user:pass@host:5432/app
	authkit migrate --database-url mysql://user:pass@host:3306/app
	authkit migrate --database-url sqlite://data/app.db

Without --database-url it reads DATABASE_URL. --table-prefix sets the prefix
of the table names (default "authkit_"), as sqlxstore.Config.TablePrefix does.
The example servers migrate on start; run this before deploying an app that
does not.

An app that keeps its users in a table of its own (sqlxstore.Config.Users)
names it and its mapping with the same flags as its code the first time;
the migrations record the mapping in the database, so later runs of
migrate, status and "authkit user" read it back and need no flag, and flags
that describe another mapping are refused with the recorded one named.
--print, which has no database, always needs them:

	--users-table TABLE          the app's table (name or schema.name)
	--users-columns id=C,email=C,password=C,name=C,created=C
	                             the app's column names (name, created optional;
	                             defaults id, email, password_hash)
	--users-id text|int64|uuid   the id column's type (default text)
	--users-id-default           the database makes UUIDs itself
	--users-id-sql-type TYPE     the SQL type of the side table's key
	--users-layout columns|side-table
	                             authkit's state in added columns (default) or
	                             in a side table
	--case-insensitive-emails    the table holds mixed-case addresses
	--existing-users-verified    rows already there count as verified

	authkit migrate status

lists every migration, applied (and when) or pending, and changes nothing.

	authkit migrate --print --dialect postgres

prints the SQL of every migration for a team that migrates with its own tool
(goose, golang-migrate, atlas) or reviews it first, without a database. The
dialect (postgres, mysql or sqlite) is --dialect's, else the database URL's
scheme. Each migration ends by recording itself in authkit's
schema_migrations table, so "authkit migrate" later finds it applied.
`,
	run: runMigrate,
}

func runMigrate(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	status := len(args) > 0 && args[0] == "status"
	if status {
		args = args[1:]
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "")
	prefix := fs.String("table-prefix", "", "")
	printSQL := fs.Bool("print", false, "")
	dialect := fs.String("dialect", "", "")
	var users usersFlags
	users.register(fs)
	if exit, ok := c.parseFlags(fs, args, stdout, stderr); !ok {
		return exit
	}
	mapping, err := users.mapping()
	if err != nil {
		return c.usageError(stderr, err.Error())
	}
	cfg := sqlxstore.Config{TablePrefix: *prefix, CleanupInterval: -1, Users: mapping}
	switch {
	case status && *printSQL:
		return c.usageError(stderr, "status and --print do not go together")
	case *dialect != "" && !*printSQL:
		return c.usageError(stderr, "--dialect goes with --print (a database URL names its own dialect)")
	case *printSQL:
		return c.printMigrations(sqlxstore.Dialect(*dialect), *dbURL, cfg, stdout, stderr)
	case *dbURL == "":
		return c.usageError(stderr, "no database: pass --database-url or set DATABASE_URL")
	}

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db, exit := openDB(ctx, c, *dbURL, cfg, users.given(), stderr)
	if db == nil {
		return exit
	}
	defer db.Close()
	if status {
		return migrationStatus(ctx, db, stdout, stderr)
	}
	applied, err := db.Apply(ctx)
	// What a failed run committed (MySQL) is reported too.
	var out strings.Builder
	for _, m := range applied {
		fmt.Fprintf(&out, "authkit migrate: applied %s\n", m.Name)
	}
	if err == nil && len(applied) == 0 {
		fmt.Fprintf(&out, "authkit migrate: %s is up to date\n", db.Dialect())
	}
	if _, werr := io.WriteString(stdout, out.String()); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		if errors.Is(err, user.ErrUnavailable) {
			fmt.Fprintf(stderr, "authkit migrate: the database is unreachable: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		}
		return 1
	}
	return 0
}

// usageError reports a usage error of c on stderr and returns exit code 2.
func (c *command) usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "authkit %s: %s\nusage: authkit %s %s\nRun \"authkit help %s\" for more.\n", c.name, msg, c.name, c.usage, c.name)
	return 2
}

// printMigrations is `authkit migrate --print`: the SQL of every migration
// for dialect d, or else for the dialect of dbURL.
func (c *command) printMigrations(d sqlxstore.Dialect, dbURL string, cfg sqlxstore.Config, stdout, stderr io.Writer) int {
	if d == "" {
		if dbURL == "" {
			return c.usageError(stderr, "--print needs a dialect: pass --dialect postgres|mysql|sqlite, --database-url or DATABASE_URL")
		}
		var err error
		if d, err = sqlxopen.Dialect(dbURL); err != nil {
			fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
			return 2
		}
	}
	ms, err := sqlxstore.Migrations(d, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		if errors.Is(err, sqlxstore.ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "-- authkit migration %s (version %d, %s)\n\n%s", m.Name, m.Version, d, m.SQL)
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		return 1
	}
	return 0
}

// migrationStatus is `authkit migrate status`: one line per migration.
func migrationStatus(ctx context.Context, db *sqlxstore.DB, stdout, stderr io.Writer) int {
	status, err := db.MigrationStatus(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, m := range status {
		if m.Applied {
			fmt.Fprintf(tw, "%s\tapplied\t%s\n", m.Name, m.AppliedAt.Format(time.RFC3339))
		} else {
			fmt.Fprintf(tw, "%s\tpending\n", m.Name)
		}
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "authkit migrate: %v\n", err)
		return 1
	}
	return 0
}

// openDB opens the database at url with cfg, for command c. Without
// --users-* flags (given false) it takes the users configuration the
// database records (sqlxstore's DB.RecordedUsers), so an app's own users
// table needs no flags once the app has migrated; with them, a recorded
// configuration must be theirs (DB.CheckUsers). On an error it prints it
// and returns a nil DB and the exit code: 2 for an invalid URL or
// configuration, 1 otherwise.
func openDB(ctx context.Context, c *command, url string, cfg sqlxstore.Config, given bool, stderr io.Writer) (*sqlxstore.DB, int) {
	db, err := sqlxopen.Open(ctx, url, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "authkit %s: %v\n", c.name, err)
		if errors.Is(err, sqlxstore.ErrInvalidConfig) {
			return nil, 2
		}
		return nil, 1
	}
	if given {
		err = db.CheckUsers(ctx)
	} else {
		var rec sqlxstore.UsersTable
		var ok bool
		if rec, ok, err = db.RecordedUsers(ctx); err == nil && ok && rec != (sqlxstore.UsersTable{}) {
			_ = db.Close()
			cfg.Users = rec
			return openDB(ctx, c, url, cfg, true, stderr)
		}
	}
	if err != nil {
		_ = db.Close()
		fmt.Fprintf(stderr, "authkit %s: %v\n", c.name, err)
		return nil, 1
	}
	return db, 0
}

// usersFlags are the flags that map the user store onto an app's own users
// table, field for field sqlxstore.UsersTable.
type usersFlags struct {
	table, columns, idType, idSQLType, layout string
	idDefault, caseInsensitive, verified      bool
}

func (f *usersFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.table, "users-table", "", "")
	fs.StringVar(&f.columns, "users-columns", "", "")
	fs.StringVar(&f.idType, "users-id", "", "")
	fs.BoolVar(&f.idDefault, "users-id-default", false, "")
	fs.StringVar(&f.idSQLType, "users-id-sql-type", "", "")
	fs.StringVar(&f.layout, "users-layout", "", "")
	fs.BoolVar(&f.caseInsensitive, "case-insensitive-emails", false, "")
	fs.BoolVar(&f.verified, "existing-users-verified", false, "")
}

// given reports whether any --users-* flag was given.
func (f *usersFlags) given() bool { return *f != (usersFlags{}) }

// mapping returns the mapping the flags describe; sqlxstore checks the names.
func (f *usersFlags) mapping() (sqlxstore.UsersTable, error) {
	t := sqlxstore.UsersTable{
		Table:                 f.table,
		IDDefault:             f.idDefault,
		IDSQLType:             f.idSQLType,
		CaseInsensitiveEmails: f.caseInsensitive,
		ExistingUsersVerified: f.verified,
	}
	if f.table == "" && *f != (usersFlags{}) {
		return t, errors.New("the --users-* flags describe a table: pass --users-table")
	}
	switch f.idType {
	case "", "text", "int64", "uuid":
		t.IDType = sqlxstore.IDType(f.idType)
	default:
		return t, fmt.Errorf("--users-id %q: want text, int64 or uuid", f.idType)
	}
	switch f.layout {
	case "", "columns":
		t.Layout = sqlxstore.Layout(f.layout)
	case "side-table":
		t.Layout = sqlxstore.LayoutSideTable
	default:
		return t, fmt.Errorf("--users-layout %q: want columns or side-table", f.layout)
	}
	if f.columns == "" {
		return t, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(f.columns, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" || seen[k] {
			return t, fmt.Errorf("--users-columns: %q is not a new key=column pair (keys: id, email, password, name, created)", kv)
		}
		seen[k] = true
		switch k {
		case "id":
			t.IDColumn = v
		case "email":
			t.EmailColumn = v
		case "password":
			t.PasswordHashColumn = v
		case "name":
			t.NameColumn = v
		case "created":
			t.CreatedAtColumn = v
		default:
			return t, fmt.Errorf("--users-columns: unknown key %q (keys: id, email, password, name, created)", k)
		}
	}
	return t, nil
}

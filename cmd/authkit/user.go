package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// The exit codes of `authkit user`, beside 0 (done), 1 (failed) and 2
// (usage).
const (
	exitNoUser       = 3 // no user has that id or address
	exitNotConfirmed = 4 // the confirmation was declined: nothing changed
)

// stdin is where `authkit user` reads its confirmations; tests replace it.
var stdin io.Reader = os.Stdin

// now is the clock of `authkit user`; tests replace it.
var now = time.Now

var userCmd = &command{
	name:    "user",
	usage:   "find|unlock|disable-2fa|end-sessions|verify-email|delete <id-or-email> [--database-url URL] [--table-prefix PREFIX] [--users-table TABLE [mapping flags]] [--actor WHO] [--yes]",
	summary: "support operations on one account: find, unlock, disable-2fa, ...",
	help: `Helps one user, as a support team does, on the database the app uses
(auth.Support in package core/auth). The user is named by id or, with an
"@", by email address.

	authkit user find ada@example.com
	authkit user unlock ada@example.com --actor "carol: ticket 4711"

The subcommands:

	find          print what authkit holds about the user (never a secret):
	              verified, 2FA, passkeys, lock, sessions, trusted devices
	unlock        clear a lockout and the failed-login count
	disable-2fa   turn off TOTP (with its recovery codes) and delete every
	              passkey, for a user who lost every factor; ends their
	              sessions and trusted devices and mails them a notice
	end-sessions  end every session: raise the session version, delete the
	              session records and trusted devices
	verify-email  mark the user's current address verified
	delete        delete the account and everything authkit holds for it:
	              the user row (on an app's own table, --users-table, the
	              app's row too), passkeys and user handle, email code,
	              session records, trusted devices

Every subcommand but find asks for confirmation on standard input ("y")
unless --yes is given, then prints what it changed. Each change is audited:
a support_* event (auth.EventSupport...) logged as JSON on standard error,
with --actor as its detail (default: $USER); say who you are and why.

The database flags are migrate's: --database-url (default DATABASE_URL),
--table-prefix and the --users-* mapping flags (see "authkit help
migrate"), which a database migrated by this version does not need: the
mapping it records is used. The notice of disable-2fa is sent through SMTP_URL and MAIL_FROM,
as the example servers send mail, and printed on standard output when
SMTP_URL is unset; APP_NAME names the app in it (default "authkit").

Exit status: 0 done (also when there was nothing to change), 1 failed, 2
usage error, 3 no such user, 4 not confirmed (nothing changed).
`,
	run: runUser,
}

// userOp is one subcommand of `authkit user`.
type userOp struct {
	confirm string // the question asked before the change, %s the account; empty for find
	do      func(ctx context.Context, sp *auth.Support, a auth.Account, actor string, out io.Writer) error
}

var userOps = map[string]userOp{
	"find":         {do: printAccount},
	"unlock":       {confirm: "Unlock %s?", do: unlockUser},
	"disable-2fa":  {confirm: "Turn off every second factor (TOTP, recovery codes, passkeys) of %s and end their sessions?", do: disable2FA},
	"end-sessions": {confirm: "End every session of %s?", do: endSessions},
	"verify-email": {confirm: "Mark the address of %s verified?", do: verifyEmail},
	"delete":       {confirm: "Delete %s and everything authkit holds for it? This cannot be undone.", do: deleteUser},
}

func runUser(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return c.usageError(stderr, "name a subcommand: find, unlock, disable-2fa, end-sessions, verify-email or delete")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		c.printHelp(stdout)
		return 0
	}
	name := args[0]
	op, ok := userOps[name]
	if !ok {
		return c.usageError(stderr, fmt.Sprintf("unknown subcommand %q", name))
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "")
	prefix := fs.String("table-prefix", "", "")
	actor := fs.String("actor", os.Getenv("USER"), "")
	yes := fs.Bool("yes", false, "")
	var users usersFlags
	users.register(fs)
	fs.SetOutput(io.Discard)
	pos, err := parseInterspersed(fs, args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(stdout)
		return 0
	case err != nil && strings.HasPrefix(err.Error(), "flag provided but not defined: ") && !flagLike(err.Error()):
		// Ids are base64url: one in 64 starts with "-".
		return c.usageError(stderr, err.Error()+` (an id that starts with "-" goes after "--": authkit user `+name+` -- <id>)`)
	case err != nil:
		return c.usageError(stderr, err.Error())
	case len(pos) != 1:
		return c.usageError(stderr, "name one user: an id or an email address")
	case *dbURL == "":
		return c.usageError(stderr, "no database: pass --database-url or set DATABASE_URL")
	case op.confirm != "" && strings.TrimSpace(*actor) == "":
		return c.usageError(stderr, "no actor: pass --actor (who you are, and why) or set USER")
	}
	mapping, err := users.mapping()
	if err != nil {
		return c.usageError(stderr, err.Error())
	}
	mailer, err := noticeMailer(stdout)
	if err != nil {
		fmt.Fprintf(stderr, "authkit user: %v\n", err)
		return 2
	}

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db, exit := openDB(ctx, c, *dbURL, sqlxstore.Config{TablePrefix: *prefix, CleanupInterval: -1, Users: mapping}, users.given(), stderr)
	if db == nil {
		return exit
	}
	defer db.Close()
	appName := os.Getenv("APP_NAME")
	sp, err := auth.NewSupport(auth.SupportConfig{
		Users: db.Users(), Sessions: db.Sessions(), TrustedDevices: db.TrustedDevices(),
		Mailer: mailer, AppName: appName, Audit: auth.LogAudit(auditLogger(stderr)), Now: now,
	})
	if err != nil {
		fmt.Fprintf(stderr, "authkit user: %v\n", err)
		return 1
	}
	a, err := sp.Find(ctx, pos[0])
	switch {
	case errors.Is(err, user.ErrNotFound):
		fmt.Fprintf(stderr, "authkit user %s: no user has the id or email %q\n", name, pos[0])
		return exitNoUser
	case err != nil:
		fmt.Fprintf(stderr, "authkit user %s: %v\n", name, err)
		return 1
	}
	if op.confirm != "" && !*yes {
		ok, err := confirm(stderr, fmt.Sprintf(op.confirm, a.Email+" (id "+a.ID+")"))
		if err != nil {
			fmt.Fprintf(stderr, "authkit user %s: %v\n", name, err)
			return 1
		}
		if !ok {
			fmt.Fprintf(stderr, "authkit user %s: not confirmed: nothing changed\n", name)
			return exitNotConfirmed
		}
	}
	if err := op.do(ctx, sp, a, *actor, stdout); err != nil {
		fmt.Fprintf(stderr, "authkit user %s: %v\n", name, err)
		return 1
	}
	return 0
}

// flagLike reports whether the unknown flag an error names looks like a
// mistyped flag (lower-case letters and dashes) rather than an id.
func flagLike(msg string) bool {
	name := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
	return name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz-") == ""
}

// parseInterspersed parses fs from args with flags before, between and
// after the positional arguments, which it returns. "--" makes the next
// argument positional even if it starts with "-" (an id such as
// "-tSfcGLaKFEBABQ8HyZdvw"); flags may follow it.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// confirm asks question on w and reads the answer from stdin: "y" or
// "yes" (any case) is yes, anything else (or no answer) no.
func confirm(w io.Writer, question string) (bool, error) {
	fmt.Fprintf(w, "%s [y/N] ", question)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// noticeMailer is the mailer of the example servers: SMTP when SMTP_URL is
// set (from MAIL_FROM), else the console on stdout.
func noticeMailer(stdout io.Writer) (mail.Mailer, error) {
	smtpURL := os.Getenv("SMTP_URL")
	if smtpURL == "" {
		return mail.NewConsole(stdout), nil
	}
	from := os.Getenv("MAIL_FROM")
	if from == "" {
		from = "authkit <no-reply@localhost>"
	}
	m, err := mail.NewSMTP(smtpURL, mail.SMTPConfig{From: from})
	if err != nil {
		return nil, fmt.Errorf("SMTP_URL: %w", err)
	}
	return m, nil
}

// auditLogger logs the support events as JSON lines on w.
func auditLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, nil))
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func count(n int) string {
	if n < 0 {
		return "not kept"
	}
	return strconv.Itoa(n)
}

// printAccount is `authkit user find`.
func printAccount(_ context.Context, _ *auth.Support, a auth.Account, _ string, out io.Writer) error {
	verified := "no"
	if !a.EmailVerifiedAt.IsZero() {
		verified = "yes, " + when(a.EmailVerifiedAt)
	}
	twoFA := "off"
	if a.TwoFactorEnabled {
		twoFA = fmt.Sprintf("on, %d recovery codes left", a.RecoveryCodes)
	}
	locked := "no"
	if a.Locked(now()) {
		locked = "until " + when(a.LockedUntil)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"id", a.ID}, {"email", a.Email}, {"name", a.Name}, {"created", when(a.CreatedAt)},
		{"email verified", verified}, {"2fa", twoFA}, {"passkeys", count(a.Passkeys)},
		{"locked", locked}, {"failed logins", strconv.Itoa(a.FailedLogins)},
		{"sessions", count(a.Sessions)}, {"trusted devices", count(a.TrustedDevices)},
		{"password changed", when(a.PasswordChangedAt)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
	}
	return tw.Flush()
}

func unlockUser(ctx context.Context, sp *auth.Support, a auth.Account, actor string, out io.Writer) error {
	was, err := sp.Unlock(ctx, a.ID, actor)
	if err != nil {
		return err
	}
	if was {
		_, err = fmt.Fprintf(out, "unlocked %s (was locked until %s)\n", a.Email, when(a.LockedUntil))
	} else {
		_, err = fmt.Fprintf(out, "%s was not locked; failed logins reset to 0\n", a.Email)
	}
	return err
}

func disable2FA(ctx context.Context, sp *auth.Support, a auth.Account, actor string, out io.Writer) error {
	r, err := sp.DisableTwoFactor(ctx, a.ID, actor)
	if r.Changed() {
		totp := "TOTP was off"
		if r.TOTP {
			totp = "TOTP and recovery codes off"
		}
		fmt.Fprintf(out, "%s: %s; %d passkeys deleted; %s sessions and %s trusted devices ended\n",
			a.Email, totp, r.Passkeys, count(r.Sessions), count(r.Trusted))
		if r.Notified {
			fmt.Fprintf(out, "notice mailed to %s\n", a.Email)
		}
	} else if err == nil {
		fmt.Fprintf(out, "%s has no second factor: nothing changed\n", a.Email)
	}
	return err
}

func endSessions(ctx context.Context, sp *auth.Support, a auth.Account, actor string, out io.Writer) error {
	r, err := sp.EndSessions(ctx, a.ID, actor)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s: every session ended (session version %d); %s session records and %s trusted devices deleted\n",
		a.Email, r.SessionVersion, count(r.Sessions), count(r.Trusted))
	return err
}

func verifyEmail(ctx context.Context, sp *auth.Support, a auth.Account, actor string, out io.Writer) error {
	already, err := sp.VerifyEmail(ctx, a.ID, actor)
	if err != nil {
		return err
	}
	if already {
		_, err = fmt.Fprintf(out, "%s was verified already: nothing changed\n", a.Email)
	} else {
		_, err = fmt.Fprintf(out, "%s marked verified\n", a.Email)
	}
	return err
}

func deleteUser(ctx context.Context, sp *auth.Support, a auth.Account, actor string, out io.Writer) error {
	r, err := sp.DeleteAccount(ctx, a.ID, actor)
	if !r.User {
		return err
	}
	fmt.Fprintf(out, "deleted %s (id %s): %s passkeys, %s session records, %s trusted devices\n",
		a.Email, a.ID, count(r.Passkeys), count(r.Sessions), count(r.Trusted))
	return err
}

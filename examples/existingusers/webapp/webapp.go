// Package webapp is the existingusers example's app: a gin server with
// its own PostgreSQL users table (bigserial ids, addresses in mixed case,
// bcrypt cost-10 hashes, no authkit columns), to which authkit is added by
// configuration only: [UsersTable] maps sqlxstore's user store onto the
// table, [sqlxstore.DB.Migrate] adds authkit's side table, and ginauth
// serves the flows. The app's own handlers keep using its own ids.
package webapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/ginauth"
)

// Schema is the app's own migration, as it was before authkit: authkit
// never creates, alters or drops this table (the side-table layout).
const Schema = `CREATE TABLE IF NOT EXISTS users (
	id            BIGSERIAL PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	password_hash TEXT NOT NULL,
	created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
)`

// NotesSchema is another table of the app's: its rows point at the
// users by a foreign key without ON DELETE, as an app's tables often do.
// Deleting a user with notes therefore needs the app's say: the
// before-delete hook ([BeforeDeleteAccount]) deletes them in the
// transaction that deletes the user. Without it the deletion fails with a
// *user.ReferencedError naming notes_user_id_fkey (the support CLI's
// `authkit user delete` says so), never with a half-deleted account.
const NotesSchema = `CREATE TABLE IF NOT EXISTS notes (
	id      BIGSERIAL PRIMARY KEY,
	user_id BIGINT NOT NULL REFERENCES users (id),
	body    TEXT NOT NULL
)`

// BeforeDeleteAccount is the app's auth.Hooks.BeforeDeleteAccount: it
// deletes the user's notes through the transaction sqlxstore deletes the
// user in (sqlxstore.TxFrom), so that both go or neither.
func BeforeDeleteAccount(ctx context.Context, u *user.User) error {
	tx, ok := sqlxstore.TxFrom(ctx)
	if !ok {
		return errors.New("webapp: the user store gave no transaction")
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM notes WHERE user_id = $1`, u.ID)
	return err
}

// UsersTable is all authkit needs to know about the app's table. The
// names are sqlxstore's defaults except created_at; they are spelled out
// here for the reader.
var UsersTable = sqlxstore.UsersTable{
	Table:              "users",
	IDColumn:           "id",
	EmailColumn:        "email",
	PasswordHashColumn: "password_hash",
	CreatedAtColumn:    "created_at",
	IDType:             sqlxstore.IDInt64,         // bigserial: the database numbers the rows
	Layout:             sqlxstore.LayoutSideTable, // authkit's state in authkit_user_state
	// The table holds Alice@Example.COM: find it as alice@example.com.
	CaseInsensitiveEmails: true,
	// The users the app had before authkit proved their addresses then.
	ExistingUsersVerified: true,
}

// StoreConfig is the sqlxstore configuration of the app's database.
func StoreConfig() sqlxstore.Config { return sqlxstore.Config{Users: UsersTable} }

// App is the running app: its handler and what Close releases.
type App struct {
	db  *sqlxstore.DB
	svc *auth.Service
	h   http.Handler
}

// New runs the app's own migration and authkit's, then builds the app on
// db (opened with StoreConfig). cfg is authkit's configuration without
// Users and LimitStore, which New fills in from db, and without
// Hooks.BeforeDeleteAccount, which New sets to [BeforeDeleteAccount].
func New(ctx context.Context, db *sqlxstore.DB, cfg auth.Config) (*App, error) {
	for _, q := range []string{Schema, NotesSchema} {
		if _, err := db.SQLX().ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("the app's migration: %w", err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("authkit's migration: %w", err)
	}
	cfg.Users = db.Users()
	cfg.LimitStore = func(string) ratelimit.Store { return db.Limits() }
	cfg.Hooks.BeforeDeleteAccount = BeforeDeleteAccount
	svc, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	r := gin.New()
	r.Use(gin.Recovery())
	ginauth.Register(r, svc)
	r.GET("/me", ginauth.RequireUser(svc), me(db))
	return &App{db: db, svc: svc, h: r}, nil
}

// Handler serves the flows and the app's routes.
func (a *App) Handler() http.Handler { return a.h }

// Service is authkit's flows, for tests and the app's own code.
func (a *App) Service() *auth.Service { return a.svc }

// Close finishes the flows' mail; the caller closes db.
func (a *App) Close(ctx context.Context) error { return a.svc.Close(ctx) }

// Account is the app's own view of the signed-in user: its row of the
// app's table, with the app's int64 id.
type Account struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"createdAt"`
}

// me is one of the app's own handlers: authkit's user id is the app's
// bigint in decimal, so the app reads its own row by it.
func me(db *sqlxstore.DB) gin.HandlerFunc {
	return func(c *gin.Context) {
		u, _ := ginauth.CurrentUser(c)
		id, err := strconv.ParseInt(u.ID, 10, 64)
		if err != nil {
			c.AbortWithError(http.StatusInternalServerError, fmt.Errorf("user id %q is not the app's bigint", u.ID))
			return
		}
		var a Account
		err = db.SQLX().QueryRowxContext(c, `SELECT id, email, created_at FROM users WHERE id = $1`, id).Scan(&a.ID, &a.Email, &a.CreatedAt)
		if errors.Is(err, context.Canceled) {
			return
		}
		if err != nil {
			c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "Service temporarily unavailable. Try again later."})
			return
		}
		c.JSON(http.StatusOK, a)
	}
}

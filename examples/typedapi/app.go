package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/nethttpauth"
)

// The app's own pages. Every handler builds the request's Visit
// (nethttpauth.Visit), calls one typed method of the Service, writes the
// Visit's cookies and headers (nethttpauth.WriteHeaders), and then answers
// with a page of its own: a 303 to the next page on success
// (Post/Redirect/Get), the form again with the error beside its field on
// failure. No authkit JSON route is mounted.

//go:embed templates/*.html
var templateFS embed.FS

// contentSecurityPolicy allows nothing but the pages themselves: no script,
// no style, no frames; images only as data: URLs (the QR code of 2FA setup);
// forms post only to this origin.
const contentSecurityPolicy = "default-src 'none'; img-src data:; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// maxFormBytes bounds a form body, as authkit bounds its JSON routes'.
const maxFormBytes = 16 << 10

// notices are the texts a redirect can ask a page to show (?notice=...),
// so a query string never puts text of its own on a page.
var notices = map[string]string{
	"registered":            "Welcome! We sent you a link to verify your email address.",
	"verification-sent":     "A new verification link is on its way.",
	"already-verified":      "Your email address is verified already.",
	"signed-out":            "You are signed out.",
	"signed-out-everywhere": "You are signed out on every device.",
	"reset-sent":            "If an account exists for that address, a reset link is on its way.",
	"password-reset":        "Your password is changed. Sign in with the new one.",
	"password-confirmed":    "Password confirmed. You can change your security settings for the next 15 minutes.",
}

// app is the example's HTTP handler: its pages over an *auth.Service.
type app struct {
	svc   *auth.Service
	log   *slog.Logger
	pages map[string]*template.Template
	h     http.Handler

	// The staff sign-in (directory.go): the app's own check, then
	// authkit's second step.
	users      user.Accounts
	directory  directory
	staffLimit *auth.RateLimit
}

// page is what every template gets.
type page struct {
	Title   string
	Notice  string
	Error   string            // the form's error that belongs to no one field
	Errors  map[string]string // field name → error shown beside it
	Values  map[string]string // field name → value shown again (never a password)
	User    *user.User
	Setup   *setup
	Codes   []string
	Token   string
	Recover bool // the 2FA page asks for a recovery code
}

// setup is a pending TOTP secret as the setup page shows it.
type setup struct {
	URI     string
	QRImage template.URL // authkit's data:image/png URL, trusted as such
}

// newApp returns the app over a Service made from cfg, with staff, the
// directory of its staff sign-in. main and the tests both build it here,
// the tests with their own mailer, clock and hasher.
func newApp(cfg auth.Config, staff directory) (*app, error) {
	svc, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	a := &app{svc: svc, log: cfg.Logger, pages: map[string]*template.Template{}, users: cfg.Users, directory: staff}
	if a.staffLimit, err = svc.NewRateLimit("staff-login", staffLimit, nil, ""); err != nil {
		_ = svc.Close(context.Background())
		return nil, err
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	names, err := templateFS.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if n.Name() == "layout.html" {
			continue
		}
		t, err := template.ParseFS(templateFS, "templates/layout.html", "templates/"+n.Name())
		if err != nil {
			return nil, err
		}
		a.pages[n.Name()] = t
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { redirect(w, r, "/account") })
	mux.HandleFunc("GET /register", a.show("register.html", "Create an account"))
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /login", a.show("login.html", "Sign in"))
	mux.HandleFunc("POST /login", a.login)
	mux.HandleFunc("GET /staff-login", a.show("staff.html", "Staff sign-in"))
	mux.HandleFunc("POST /staff-login", a.staffLogin)
	mux.HandleFunc("GET /2fa", a.show("twofactor.html", "Two-factor authentication"))
	mux.HandleFunc("POST /2fa", a.twoFactor(page{Title: "Two-factor authentication"}, a.svc.VerifyTwoFactor))
	mux.HandleFunc("GET /2fa/recover", a.showRecover)
	mux.HandleFunc("POST /2fa/recover", a.twoFactor(page{Title: "Use a recovery code", Recover: true}, a.svc.RecoverTwoFactor))
	mux.HandleFunc("GET /verify-email/{token}", a.verifyEmail)
	mux.HandleFunc("GET /forgot-password", a.show("forgot.html", "Forgot your password?"))
	mux.HandleFunc("POST /forgot-password", a.forgotPassword)
	mux.HandleFunc("GET /reset-password/{token}", a.showReset)
	mux.HandleFunc("POST /reset-password/{token}", a.resetPassword)
	mux.HandleFunc("GET /account", a.account)
	mux.HandleFunc("POST /account/resend-verification", a.resendVerification)
	mux.HandleFunc("POST /account/2fa/setup", a.setupTwoFactor)
	mux.HandleFunc("POST /account/2fa/confirm", a.confirmTwoFactor)
	mux.HandleFunc("GET /account/confirm-password", a.show("confirm.html", "Confirm your password"))
	mux.HandleFunc("POST /account/confirm-password", a.confirmPassword)
	mux.HandleFunc("POST /logout", a.logout)
	mux.HandleFunc("POST /logout-everywhere", a.logoutEverywhere)

	a.h = securePages(a.sameOrigin(mux))
	return a, nil
}

// sameOrigin refuses cross-origin form posts with authkit's own check (the
// one its JSON routes make, with Config.TrustedOrigins).
func (a *app) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.svc.CheckOrigin(nethttpauth.Request(r)); err != nil {
			a.render(w, http.StatusForbidden, "error.html", page{Title: "Forbidden", Error: auth.AsError(err).Message})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the pages.
func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.h.ServeHTTP(w, r) }

// Close stops the Service: queued mail is sent.
func (a *app) Close(ctx context.Context) error {
	return errors.Join(a.staffLimit.Close(), a.svc.Close(ctx))
}

// securePages sets the headers of every answer. no-referrer keeps the
// tokens of /verify-email/ and /reset-password/ URLs from leaking; no-store
// keeps recovery codes and account pages out of caches.
func securePages(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// render writes page name with status; the page is rendered before
// anything is written, so a template error is a clean 500.
func (a *app) render(w http.ResponseWriter, status int, name string, p page) {
	var buf bytes.Buffer
	if err := a.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		a.log.Error("typedapi: render", "page", name, "err", err)
		http.Error(w, "Internal server error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// redirect answers 303 See Other: after a POST, the browser GETs to.
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// fail renders page p again with err: its message beside the field that
// fieldOf names, or above the form, with the error's status. Errors that
// are not an *auth.Error (a store down, a bug) are logged here, as
// authkit's JSON routes would log them; the page shows only the generic
// text AsError gives.
func (a *app) fail(w http.ResponseWriter, r *http.Request, name string, p page, err error, fieldOf func(error) string) {
	e := auth.AsError(err)
	var known *auth.Error
	if !errors.As(err, &known) && !errors.Is(err, context.Canceled) {
		a.log.ErrorContext(r.Context(), "typedapi: flow failed", "path", r.URL.Path, "err", err)
	}
	// A 429's Retry-After came with the visit's headers (WriteHeaders).
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(auth.RetryAfterUnavailable))
	}
	field := ""
	if fieldOf != nil {
		field = fieldOf(err)
	}
	if field == "" {
		p.Error = e.Message
	} else {
		p.Errors = map[string]string{field: e.Message}
	}
	a.render(w, e.Status, name, p)
}

// formVisit reads the form of a page's POST (parseForm) and returns the
// request's visit. When the form cannot be read it answers the page name
// with the error, and ok is false.
func (a *app) formVisit(w http.ResponseWriter, r *http.Request, name string, p page) (v *auth.Visit, ok bool) {
	if err := parseForm(w, r); err != nil {
		a.fail(w, r, name, p, err, nil)
		return nil, false
	}
	return nethttpauth.Visit(r, a.svc), true
}

// parseForm reads a bounded form body and refuses a field given twice, as
// authkit's own routes do. Invalid characters (a right-to-left override in
// a name, a NUL) are refused by the typed methods themselves.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return auth.ErrBodyTooLarge
		}
		return auth.ErrInvalidForm
	}
	for _, vs := range r.PostForm {
		if len(vs) > 1 {
			return auth.ErrDuplicateField
		}
	}
	return nil
}

// fieldIs returns a fieldOf for fail: field when err is one of targets.
func fieldIs(field string, targets ...error) func(error) string {
	return func(err error) string {
		for _, t := range targets {
			if errors.Is(err, t) {
				return field
			}
		}
		return ""
	}
}

// fields combines fieldOfs: the first that names a field wins.
func fields(fs ...func(error) string) func(error) string {
	return func(err error) string {
		for _, f := range fs {
			if name := f(err); name != "" {
				return name
			}
		}
		return ""
	}
}

// The errors that belong beside a field.
var (
	emailField = fieldIs("email", auth.ErrEmailRegistered, auth.ErrInvalidEmail, auth.ErrEmailRequired,
		auth.ErrEmailTooLong)
	newPasswordField = fieldIs("password", auth.ErrPasswordTooShort, auth.ErrPasswordTooLong,
		auth.ErrPasswordInvalid)
	codeField = fieldIs("code", auth.ErrInvalidCode, auth.ErrInvalidTwoFactorCode, auth.ErrCodeUsed,
		auth.ErrInvalidRecoveryCode)
)

// show serves a form page as it first appears.
func (a *app) show(name, title string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.render(w, http.StatusOK, name, page{Title: title, Notice: notices[r.URL.Query().Get("notice")]})
	}
}

func (a *app) register(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Create an account"}
	v, ok := a.formVisit(w, r, "register.html", p)
	if !ok {
		return
	}
	f := r.PostForm
	p.Values = map[string]string{"email": f.Get("email"), "name": f.Get("name")}
	_, err := a.svc.Register(r.Context(), v, auth.RegisterInput{
		Email: f.Get("email"), Password: f.Get("password"), Name: f.Get("name"),
	})
	nethttpauth.WriteHeaders(w, v)
	if err != nil {
		a.fail(w, r, "register.html", p, err, fields(emailField, newPasswordField,
			fieldIs("name", auth.ErrNameRequired, auth.ErrNameTooLong)))
		return
	}
	redirect(w, r, "/account?notice=registered")
}

func (a *app) login(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Sign in"}
	v, ok := a.formVisit(w, r, "login.html", p)
	if !ok {
		return
	}
	f := r.PostForm
	p.Values = map[string]string{"email": f.Get("email"), "remember": f.Get("remember")}
	res, err := a.svc.Login(r.Context(), v, auth.LoginInput{
		Email: f.Get("email"), Password: f.Get("password"), Remember: f.Get("remember") != "",
	})
	nethttpauth.WriteHeaders(w, v)
	switch {
	case err != nil:
		a.fail(w, r, "login.html", p, err, fieldIs("password", auth.ErrInvalidCredentials))
	case res.RequiresTwoFactor:
		redirect(w, r, "/2fa")
	default:
		redirect(w, r, "/account")
	}
}

func (a *app) showRecover(w http.ResponseWriter, r *http.Request) {
	a.render(w, http.StatusOK, "twofactor.html", page{Title: "Use a recovery code", Recover: true})
}

// twoFactor answers the second step of a login, with a code from the
// authenticator app (POST /2fa, VerifyTwoFactor) or a recovery code (POST
// /2fa/recover, RecoverTwoFactor); the account page then shows how many
// recovery codes are left.
func (a *app) twoFactor(p page, step func(context.Context, *auth.Visit, auth.TwoFactorInput) (auth.TwoFactorResult, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := a.formVisit(w, r, "twofactor.html", p)
		if !ok {
			return
		}
		_, err := step(r.Context(), v, auth.TwoFactorInput{Code: r.PostForm.Get("code")})
		nethttpauth.WriteHeaders(w, v)
		if err != nil {
			a.fail(w, r, "twofactor.html", p, err, codeField)
			return
		}
		redirect(w, r, "/account")
	}
}

// verifyEmail is the page the mailed link opens: a GET that verifies, as
// the link must work with one click.
func (a *app) verifyEmail(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Verify your email"}
	v := nethttpauth.Visit(r, a.svc)
	already, err := a.svc.VerifyEmail(r.Context(), v, auth.VerifyEmailInput{Token: r.PathValue("token")})
	nethttpauth.WriteHeaders(w, v)
	if err != nil {
		a.fail(w, r, "verify.html", p, err, nil)
		return
	}
	p.Notice = "Your email address is verified."
	if already {
		p.Notice = notices["already-verified"]
	}
	a.render(w, http.StatusOK, "verify.html", p)
}

func (a *app) forgotPassword(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Forgot your password?"}
	v, ok := a.formVisit(w, r, "forgot.html", p)
	if !ok {
		return
	}
	p.Values = map[string]string{"email": r.PostForm.Get("email")}
	err := a.svc.ForgotPassword(r.Context(), v, auth.ForgotPasswordInput{Email: r.PostForm.Get("email")})
	nethttpauth.WriteHeaders(w, v)
	if err != nil {
		a.fail(w, r, "forgot.html", p, err, emailField)
		return
	}
	redirect(w, r, "/forgot-password?notice=reset-sent")
}

func (a *app) showReset(w http.ResponseWriter, r *http.Request) {
	a.render(w, http.StatusOK, "reset.html", page{Title: "Choose a new password", Token: r.PathValue("token")})
}

func (a *app) resetPassword(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Choose a new password", Token: r.PathValue("token")}
	v, ok := a.formVisit(w, r, "reset.html", p)
	if !ok {
		return
	}
	err := a.svc.ResetPassword(r.Context(), v, auth.ResetPasswordInput{
		Token: r.PathValue("token"), Password: r.PostForm.Get("password"), ConfirmPassword: r.PostForm.Get("confirm"),
	})
	nethttpauth.WriteHeaders(w, v)
	if err != nil {
		a.fail(w, r, "reset.html", p, err, fields(fieldIs("confirm", auth.ErrPasswordsDiffer), newPasswordField))
		return
	}
	redirect(w, r, "/login?notice=password-reset")
}

// signedIn returns the visit's user, or answers: a 303 to /login without a
// session, an error page otherwise. ok is false when it answered.
func (a *app) signedIn(w http.ResponseWriter, r *http.Request, v *auth.Visit) (u *user.User, ok bool) {
	u, err := a.svc.CurrentUser(r.Context(), v)
	if err == nil {
		return u, true
	}
	nethttpauth.WriteHeaders(w, v)
	if errors.Is(err, auth.ErrNotAuthenticated) {
		redirect(w, r, "/login")
	} else {
		a.fail(w, r, "error.html", page{Title: "Something went wrong"}, err, nil)
	}
	return nil, false
}

func (a *app) account(w http.ResponseWriter, r *http.Request) {
	v := nethttpauth.Visit(r, a.svc)
	u, ok := a.signedIn(w, r, v)
	if !ok {
		return
	}
	nethttpauth.WriteHeaders(w, v)
	a.render(w, http.StatusOK, "account.html", page{Title: "Your account", User: u, Notice: notices[r.URL.Query().Get("notice")]})
}

// accountFailed renders the account page with err above it, for the
// buttons that have no field of their own.
func (a *app) accountFailed(w http.ResponseWriter, r *http.Request, v *auth.Visit, err error) {
	if errors.Is(err, auth.ErrNotAuthenticated) {
		redirect(w, r, "/login")
		return
	}
	if errors.Is(err, auth.ErrReauthenticationRequired) {
		redirect(w, r, "/account/confirm-password")
		return
	}
	p := page{Title: "Your account"}
	p.User, _ = a.svc.CurrentUser(r.Context(), v)
	a.fail(w, r, "account.html", p, err, nil)
}

func (a *app) resendVerification(w http.ResponseWriter, r *http.Request) {
	v := nethttpauth.Visit(r, a.svc)
	sent, err := a.svc.ResendVerification(r.Context(), v)
	nethttpauth.WriteHeaders(w, v)
	switch {
	case err != nil:
		a.accountFailed(w, r, v, err)
	case sent:
		redirect(w, r, "/account?notice=verification-sent")
	default:
		redirect(w, r, "/account?notice=already-verified")
	}
}

// setupTwoFactor answers the POST with the setup page itself rather than a
// redirect: the pending secret is shown once, and the typed API has no way
// to read it back on a later GET.
func (a *app) setupTwoFactor(w http.ResponseWriter, r *http.Request) {
	v := nethttpauth.Visit(r, a.svc)
	s, err := a.svc.SetupTwoFactor(r.Context(), v)
	nethttpauth.WriteHeaders(w, v)
	if err != nil {
		a.accountFailed(w, r, v, err)
		return
	}
	a.render(w, http.StatusOK, "setup.html", page{
		Title: "Set up two-factor authentication",
		Setup: &setup{URI: s.URI, QRImage: template.URL(s.QRImage)}, // authkit's own data:image/png URL
	})
}

// confirmTwoFactor answers with the recovery codes on success: like the
// secret, they exist only in this answer.
func (a *app) confirmTwoFactor(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Set up two-factor authentication"}
	v, ok := a.formVisit(w, r, "setup.html", p)
	if !ok {
		return
	}
	codes, err := a.svc.ConfirmTwoFactor(r.Context(), v, auth.ConfirmTwoFactorInput{Code: r.PostForm.Get("code")})
	nethttpauth.WriteHeaders(w, v)
	switch {
	case errors.Is(err, auth.ErrNotAuthenticated):
		redirect(w, r, "/login")
	case errors.Is(err, auth.ErrReauthenticationRequired):
		redirect(w, r, "/account/confirm-password")
	case err != nil:
		a.fail(w, r, "setup.html", p, err, codeField)
	default:
		a.render(w, http.StatusOK, "codes.html", page{Title: "Save your recovery codes", Codes: codes})
	}
}

// confirmPassword is the re-authentication step ("sudo mode"): 2FA setup
// and confirm send a session that signed in more than 15 minutes ago here.
func (a *app) confirmPassword(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Confirm your password"}
	v, ok := a.formVisit(w, r, "confirm.html", p)
	if !ok {
		return
	}
	_, err := a.svc.ConfirmPassword(r.Context(), v, auth.ConfirmPasswordInput{Password: r.PostForm.Get("password")})
	nethttpauth.WriteHeaders(w, v)
	switch {
	case errors.Is(err, auth.ErrNotAuthenticated):
		redirect(w, r, "/login")
	case err != nil:
		a.fail(w, r, "confirm.html", p, err, fieldIs("password", auth.ErrInvalidPassword))
	default:
		redirect(w, r, "/account?notice=password-confirmed")
	}
}

func (a *app) logout(w http.ResponseWriter, r *http.Request) {
	v := nethttpauth.Visit(r, a.svc)
	a.svc.Logout(r.Context(), v)
	nethttpauth.WriteHeaders(w, v)
	redirect(w, r, "/login?notice=signed-out")
}

func (a *app) logoutEverywhere(w http.ResponseWriter, r *http.Request) {
	v := nethttpauth.Visit(r, a.svc)
	err := a.svc.LogoutEverywhere(r.Context(), v)
	nethttpauth.WriteHeaders(w, v)
	if err != nil {
		a.accountFailed(w, r, v, err)
		return
	}
	redirect(w, r, "/login?notice=signed-out-everywhere")
}

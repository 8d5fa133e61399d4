package pages

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// maxFormBytes bounds a form body, as authkit bounds its JSON routes'.
const maxFormBytes = 16 << 10

// fields maps error codes to the input an error is shown beside; a code
// not listed belongs to the form as a whole.
type fields map[auth.Code]string

// routes registers every page. A switched-off feature's pages are not
// registered: they answer the 404 page, as its JSON routes answer 404.
func (h *Handler) routes() {
	on := h.svc.Enabled
	get := func(path string, fn http.HandlerFunc) { h.mux.HandleFunc("GET "+h.prefix+path, fn) }

	h.mux.HandleFunc(h.prefix+"/", h.notFound)
	get("/{$}", func(w http.ResponseWriter, r *http.Request) { h.redirect(w, r, h.afterLogin, nil) })
	get("/assets/{file}", h.serveAsset)

	get("/login", h.simple("login"))
	h.post("/login", h.login)
	get("/2fa", h.twoFactorPage)
	h.post("/2fa", h.verifyCode)
	h.post("/2fa/recover", h.recoverCode)
	if h.svc.HasEmailCodes() {
		h.post("/2fa/email-code", h.sendEmailCode)
		h.post("/2fa/email-code/verify", h.verifyEmailCode)
	}
	if h.svc.HasEmailSignIn() {
		get("/email-sign-in", h.simple("signin"))
		h.post("/email-sign-in", h.requestSignIn)
		h.post("/email-sign-in/verify", h.verifySignIn)
		get("/email-sign-in/{token}", h.signInLinkPage)
		h.post("/email-sign-in/{token}", h.signInLink)
	}
	h.post("/logout", h.logout)
	h.post("/logout-all", h.logoutAll)
	get("/verify-email/{token}", h.verifyEmail)
	get("/resend-verification", h.signedIn("resend"))
	h.post("/resend-verification", h.resend)
	get("/dashboard", h.dashboard)
	get("/settings/security", h.signedIn("security"))
	get("/settings/confirm-password", h.confirmPage)
	if h.svc.HasSessionRecords() {
		h.post("/settings/sessions/end", h.endSession)
	}
	if h.svc.HasTrustedDevices() {
		h.post("/settings/trusted-devices/forget", h.forgetDevice)
	}
	if h.cfg.Passkeys != nil {
		h.post("/settings/passkeys/rename", h.renamePasskey)
		h.post("/settings/passkeys/delete", h.deletePasskey)
	}
	if h.identitiesOn() {
		h.post("/settings/identities/unlink", h.unlinkIdentity)
	}
	if h.svc.HasAPIKeys() {
		h.post("/settings/api-keys/create", h.createAPIKey)
		h.post("/settings/api-keys/revoke", h.revokeAPIKey)
	}
	h.post("/settings/confirm-password", h.confirmPassword)
	get("/settings/delete-account", h.signedIn("delete"))
	h.post("/settings/delete-account", h.deleteAccount)
	get("/settings/export", h.export)
	h.post("/settings/2fa/disable", h.disableTwoFactor)
	if on(auth.FeatureRegistration) {
		get("/register", h.simple("register"))
		h.post("/register", h.register)
	}
	if on(auth.FeaturePasswordReset) {
		get("/forgot-password", h.simple("forgot"))
		h.post("/forgot-password", h.forgot)
		get("/reset-password/{token}", h.resetPage)
		h.post("/reset-password/{token}", h.reset)
	}
	if on(auth.FeatureTwoFactor) {
		h.post("/settings/2fa/setup", h.setupTwoFactor)
		h.post("/settings/2fa/confirm", h.confirmTwoFactor)
		get("/settings/recovery-codes", h.signedIn("codes"))
		h.post("/settings/recovery-codes", h.regenerateCodes)
	}
	if on(auth.FeatureEmailChange) {
		h.post("/settings/email", h.changeEmail)
	}
	if on(auth.FeaturePasswordChange) {
		h.post("/settings/password", h.changePassword)
	}
}

// post registers a form's handler: the cross-origin check of the JSON
// routes (svc.CheckOrigin) first, then the form, bounded, read; fn sees
// r.PostForm. Nothing is ever read from the query.
func (h *Handler) post(path string, fn func(w http.ResponseWriter, r *http.Request, visit *auth.Visit)) {
	h.mux.HandleFunc("POST "+h.prefix+path, func(w http.ResponseWriter, r *http.Request) {
		req := auth.HTTPRequest(r, nil)
		visit := h.svc.Visit(req)
		if err := h.svc.CheckOrigin(req); err != nil {
			h.problem(w, r, visit, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				h.problem(w, r, visit, auth.ErrBodyTooLarge)
			} else {
				h.problem(w, r, visit, auth.ErrInvalidForm)
			}
			return
		}
		fn(w, r, visit)
	})
}

// visit makes the Visit of a GET.
func (h *Handler) visit(r *http.Request) *auth.Visit { return h.svc.Visit(auth.HTTPRequest(r, nil)) }

// viewer returns the signed-in user of visit, or nil. A store that fails
// is reported by the caller that needs the user; here it means signed out.
func (h *Handler) viewer(r *http.Request, visit *auth.Visit) (*user.Public, error) {
	u, err := h.svc.CurrentUser(r.Context(), visit)
	if err != nil {
		if errors.Is(err, auth.ErrNotAuthenticated) {
			return nil, nil
		}
		return nil, err
	}
	p := u.Public()
	return &p, nil
}

// notice is the text of a ?done= key, "" for a key there is no text for:
// a query never puts text of its own on a page.
func (h *Handler) notice(v *View, r *http.Request) {
	key := r.URL.Query().Get("done")
	if _, ok := english["done."+key]; ok && key != "" {
		v.Notice = "done." + key
	}
}

// socialError shows the error a failed social sign-in came back with
// (?error=code): only when Config.Social is set and the code is one of
// authkit's, as its text in the visit's language, so that a query never
// puts text of its own on a page.
func (h *Handler) socialError(v *View, r *http.Request, visit *auth.Visit) {
	code := r.URL.Query().Get("error")
	if len(h.cfg.Social) == 0 || code == "" {
		return
	}
	for _, e := range auth.Codes() {
		if string(e.Code) == code {
			v.Form, v.Errors = "login-form", map[string]string{"": h.svc.Modules().Text(visit, &e)}
			return
		}
	}
}

// simple serves a page that needs nothing but the visitor.
func (h *Handler) simple(page string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		visit := h.visit(r)
		u, _ := h.viewer(r, visit)
		v := &View{Page: page, User: u}
		h.notice(v, r)
		if page == "login" {
			h.socialError(v, r, visit)
		}
		h.render(w, r, http.StatusOK, v, visit)
	}
}

// signedInUser returns the signed-in user of visit. Without one it has
// answered already (the login page, or the problem page when the store
// fails) and reports false.
func (h *Handler) signedInUser(w http.ResponseWriter, r *http.Request, visit *auth.Visit) (*user.Public, bool) {
	u, err := h.viewer(r, visit)
	if err != nil {
		h.problem(w, r, visit, err)
		return nil, false
	}
	if u == nil {
		h.redirect(w, r, h.prefix+"/login", visit)
		return nil, false
	}
	return u, true
}

// signedIn serves a page that needs a signed-in user: without one it
// sends the person to the login page.
func (h *Handler) signedIn(page string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		visit := h.visit(r)
		u, ok := h.signedInUser(w, r, visit)
		if !ok {
			return
		}
		v := &View{Page: page, User: u}
		h.notice(v, r)
		h.render(w, r, http.StatusOK, v, visit)
	}
}

// fail answers a form's error: the page again, with the error beside its
// field (or above the form) and the error's status. A request that is not
// signed in (any more) goes to the login page instead.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, visit *auth.Visit, v *View, err error, where fields) {
	if errors.Is(err, auth.ErrNotAuthenticated) {
		h.redirect(w, r, h.prefix+"/login?done=session-ended", visit)
		return
	}
	if errors.Is(err, auth.ErrReauthenticationRequired) {
		// The sign-in is too old for this change: confirm the password,
		// then come back to the page the form was on.
		next := "security"
		switch {
		case v.Page == "codes":
			next = "recovery-codes"
		case strings.HasPrefix(v.Form, "passkey-"):
			next = "passkeys"
		case strings.HasPrefix(v.Form, "identit"):
			next = "identities"
		case strings.HasPrefix(v.Form, "api-key"):
			next = "api-keys"
		}
		h.redirect(w, r, h.prefix+"/settings/confirm-password?next="+next, visit)
		return
	}
	var known *auth.Error
	if !errors.As(err, &known) {
		h.log.ErrorContext(r.Context(), "authkit pages: flow failed", "page", v.Page, "err", err)
	}
	e := auth.AsError(err)
	if v.User == nil {
		v.User, _ = h.viewer(r, visit)
	}
	v.Errors = map[string]string{where[e.Code]: h.svc.Modules().Text(visit, err)}
	h.render(w, r, e.Status, v, visit)
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	email := r.PostFormValue("email")
	in := auth.LoginInput{Email: email, Password: r.PostFormValue("password"), Remember: checked(r, "remember")}
	res, err := h.svc.Login(r.Context(), visit, in)
	if err != nil {
		where := fields{"invalid_credentials": "password", "email_password_required": "password"}
		if strings.TrimSpace(email) == "" {
			where["email_password_required"] = "email"
		}
		h.fail(w, r, visit, &View{Page: "login", Form: "login-form", Values: signInValues(email, in.Remember)}, err, where)
		return
	}
	h.signedInTo(w, r, visit, res)
}

// twoFactorRequired is where the pages send a signed-in user whom
// auth.Config.RequireTwoFactor asks to set 2FA up.
const twoFactorRequired = "/settings/security?done=2fa-required"

// landing is where a sign-in without a second step goes: target, or the
// security page with its notice while auth.Config.RequireTwoFactor asks
// u to set 2FA up (in the grace period and after it).
func (h *Handler) landing(u *user.User, target string) string {
	if h.svc.TwoFactorRequirement(u).Required {
		return h.prefix + twoFactorRequired
	}
	return target
}

// signInValues are the values a refused sign-in form shows again: the
// address typed and the remember box as it was.
func signInValues(email string, remember bool) map[string]string {
	values := map[string]string{"email": email}
	if remember {
		values["remember"] = "on"
	}
	return values
}

// checked reads a checkbox.
func checked(r *http.Request, name string) bool {
	switch r.PostFormValue(name) {
	case "on", "true", "1", "yes":
		return true
	}
	return false
}

var registerFields = fields{
	"email_required": "email", "invalid_email": "email", "email_too_long": "email", "email_already_registered": "email",
	"name_required": "name", "name_too_long": "name",
	"password_too_short": "password", "password_context_word": "password", "password_too_long": "password", "password_invalid_characters": "password",
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	in := auth.RegisterInput{Email: r.PostFormValue("email"), Password: r.PostFormValue("password"),
		Name: r.PostFormValue("name"), Fields: map[string]string{}}
	// An app's own fields (auth.Config.RegisterFields) from its register
	// template; the Service reads only the ones it declares.
	for k := range r.PostForm {
		switch k {
		case "email", "password", "name":
		default:
			in.Fields[k] = r.PostFormValue(k)
		}
	}
	u, err := h.svc.Register(r.Context(), visit, in)
	if err != nil {
		values := map[string]string{"email": in.Email, "name": in.Name}
		for k, val := range in.Fields {
			values[k] = val
		}
		h.fail(w, r, visit, &View{Page: "register", Form: "register-form", Values: values}, err, registerFields)
		return
	}
	h.redirect(w, r, h.landing(u, withQuery(h.afterLogin, "done", "registered")), visit)
}

var codeFields = fields{"invalid_two_factor_code": "code", "code_already_used": "code", "invalid_recovery_code": "recovery-code"}

func (h *Handler) verifyCode(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	_, err := h.svc.VerifyTwoFactor(r.Context(), visit, auth.TwoFactorInput{Code: r.PostFormValue("code"), TrustDevice: checked(r, "trustDevice")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "twofactor", Form: "totp-form"}, err, codeFields)
		return
	}
	h.redirect(w, r, h.afterLogin, visit)
}

func (h *Handler) recoverCode(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	_, err := h.svc.RecoverTwoFactor(r.Context(), visit, auth.TwoFactorInput{Code: r.PostFormValue("code"), TrustDevice: checked(r, "trustDevice")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "twofactor", Form: "recovery-form", RecoveryOpen: true}, err, codeFields)
		return
	}
	h.redirect(w, r, withQuery(h.afterLogin, "done", "recovery-used"), visit)
}

// emailCodeSent is the ?done= key of the 2FA page after a code was
// mailed: the page then shows the code's field. It has no banner text
// (the form says where the code went), so notice ignores it.
const emailCodeSent = "email-code-sent"

// twoFactorPage serves the second step of a login; after a mailed code
// (?done=email-code-sent) it shows the field for that code.
func (h *Handler) twoFactorPage(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	u, _ := h.viewer(r, visit)
	v := &View{Page: "twofactor", User: u, emailCodeSent: r.URL.Query().Get("done") == emailCodeSent}
	h.notice(v, r)
	h.render(w, r, http.StatusOK, v, visit)
}

// sendEmailCode mails a code for the pending login (a new one replaces
// the last) and shows the 2FA page with the field for it. The form of the
// "send a new code" button says again=on, so that an error keeps that
// field on the page.
func (h *Handler) sendEmailCode(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	if err := h.svc.SendTwoFactorEmailCode(r.Context(), visit); err != nil {
		h.fail(w, r, visit, &View{Page: "twofactor", Form: "email-send-form", emailCodeSent: checked(r, "again")}, err, nil)
		return
	}
	h.redirect(w, r, h.prefix+"/2fa?done="+emailCodeSent, visit)
}

// emailCodeFields puts the errors of a mailed code beside its field; the
// others (too many tries, no pending login, an unverified address) belong
// to the form, as on the TOTP form.
var emailCodeFields = fields{"invalid_two_factor_code": "email-code", "code_already_used": "email-code",
	"email_code_expired": "email-code", "invalid_characters": "email-code"}

// verifyEmailCode finishes the login with a mailed code, as verifyCode
// does with a TOTP code: the password step's "keep me signed in", "trust
// this browser" when offered, then AfterLogin.
func (h *Handler) verifyEmailCode(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	_, err := h.svc.VerifyTwoFactorEmailCode(r.Context(), visit, auth.TwoFactorInput{Code: r.PostFormValue("code"), TrustDevice: checked(r, "trustDevice")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "twofactor", Form: "email-code-form", emailCodeSent: true}, err, emailCodeFields)
		return
	}
	h.redirect(w, r, h.afterLogin, visit)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	h.svc.Logout(r.Context(), visit)
	h.redirect(w, r, h.prefix+"/login?done=logged-out", visit)
}

func (h *Handler) logoutAll(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	if err := h.svc.LogoutEverywhere(r.Context(), visit); err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "logout-all-form"}, err, nil)
		return
	}
	h.redirect(w, r, h.prefix+"/login?done=logged-out-everywhere", visit)
}

// verifyEmail verifies the mailed link's token when the page is opened,
// as GET /api/auth/verify-email/{token} does, and goes on to where the
// person can use the account: AfterLogin when signed in, else the login
// page, with the news.
func (h *Handler) verifyEmail(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	already, err := h.svc.VerifyEmail(r.Context(), visit, auth.VerifyEmailInput{Token: r.PathValue("token")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "verify", Form: "verify"}, err, nil)
		return
	}
	done := "email-verified"
	if already {
		done = "already-verified"
	}
	if u, _ := h.viewer(r, visit); u != nil {
		h.redirect(w, r, withQuery(h.afterLogin, "done", done), visit)
		return
	}
	h.redirect(w, r, h.prefix+"/login?done="+done, visit)
}

func (h *Handler) resend(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	sent, err := h.svc.ResendVerification(r.Context(), visit)
	if errors.Is(err, auth.ErrNotAuthenticated) {
		h.redirect(w, r, h.prefix+"/login?done=session-ended", visit)
		return
	}
	if err != nil {
		h.fail(w, r, visit, &View{Page: "resend", Form: "resend-form"}, err, nil)
		return
	}
	done := "verification-sent"
	if !sent {
		done = "already-verified"
	}
	h.redirect(w, r, h.prefix+"/resend-verification?done="+done, visit)
}

var emailFields = fields{"email_required": "email", "invalid_email": "email", "email_too_long": "email"}

// Sign-in by email: the address, then the mailed code on the same page
// (or the mailed link's page, whose button posts: a GET signs nobody in).

// signInFields puts the errors of a mailed code beside its field.
var signInFields = fields{"invalid_sign_in_code": "signin-code", "email_code_expired": "signin-code", "code_already_used": "signin-code"}

func (h *Handler) requestSignIn(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	email := r.PostFormValue("email")
	v := &View{Page: "signin", Form: "signin-form", Values: map[string]string{"email": email}}
	if err := h.svc.RequestEmailSignIn(r.Context(), visit, auth.EmailSignInInput{Email: email}); err != nil {
		h.fail(w, r, visit, v, err, emailFields)
		return
	}
	v.Form, v.SignInSent = "signin-code-form", true
	v.Values["email"] = strings.ToLower(strings.TrimSpace(email))
	h.render(w, r, http.StatusOK, v, visit)
}

func (h *Handler) verifySignIn(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	email := r.PostFormValue("email")
	in := auth.EmailSignInVerifyInput{Email: email, Code: r.PostFormValue("code"), Remember: checked(r, "remember")}
	res, err := h.svc.VerifyEmailSignIn(r.Context(), visit, in)
	if err != nil {
		h.fail(w, r, visit, &View{Page: "signin", Form: "signin-code-form", SignInSent: true, Values: signInValues(email, in.Remember)}, err, signInFields)
		return
	}
	h.signedInTo(w, r, visit, res)
}

// signInLinkPage shows the mailed link's button.
func (h *Handler) signInLinkPage(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	u, _ := h.viewer(r, visit)
	h.render(w, r, http.StatusOK, &View{Page: "signinlink", User: u, Token: r.PathValue("token")}, visit)
}

func (h *Handler) signInLink(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	token := r.PathValue("token")
	res, err := h.svc.VerifyEmailSignInLink(r.Context(), visit, auth.EmailSignInLinkInput{Token: token, Remember: checked(r, "remember")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "signinlink", Form: "signin-link-form", Token: token}, err, fields{})
		return
	}
	h.signedInTo(w, r, visit, res)
}

// signedInTo goes on from a first step: to the 2FA page, or signed in.
func (h *Handler) signedInTo(w http.ResponseWriter, r *http.Request, visit *auth.Visit, res auth.LoginResult) {
	if res.RequiresTwoFactor {
		h.redirect(w, r, h.prefix+"/2fa", visit)
		return
	}
	h.redirect(w, r, h.landing(res.User, h.afterLogin), visit)
}

func (h *Handler) forgot(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	email := r.PostFormValue("email")
	if err := h.svc.ForgotPassword(r.Context(), visit, auth.ForgotPasswordInput{Email: email}); err != nil {
		h.fail(w, r, visit, &View{Page: "forgot", Form: "forgot-form", Values: map[string]string{"email": email}}, err, emailFields)
		return
	}
	h.redirect(w, r, h.prefix+"/forgot-password?done=forgot-sent", visit)
}

// resetPage shows the form of a mailed reset link, or, for a link that
// can no longer set a password (forged, expired, used), says so at once
// and offers a new one.
func (h *Handler) resetPage(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	u, _ := h.viewer(r, visit)
	v := &View{Page: "reset", User: u, Token: r.PathValue("token")}
	var err error
	v.PasswordMin, err = h.svc.CheckResetLinkMin(r.Context(), visit, v.Token)
	switch {
	case errors.Is(err, auth.ErrResetLinkInvalid) || errors.Is(err, auth.ErrResetLinkUsed):
		v.BadLink, v.Form = true, "reset-form"
		v.Errors = map[string]string{"": h.svc.Modules().Text(visit, err)}
		h.render(w, r, auth.AsError(err).Status, v, visit)
	case err != nil:
		h.problem(w, r, visit, err)
	default:
		h.render(w, r, http.StatusOK, v, visit)
	}
}

var resetFields = fields{"passwords_do_not_match": "confirmPassword",
	"password_too_short": "password", "password_context_word": "password", "password_too_long": "password", "password_invalid_characters": "password"}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	token := r.PathValue("token")
	err := h.svc.ResetPassword(r.Context(), visit, auth.ResetPasswordInput{Token: token,
		Password: r.PostFormValue("password"), ConfirmPassword: r.PostFormValue("confirmPassword")})
	if err != nil {
		bad := errors.Is(err, auth.ErrResetLinkInvalid) || errors.Is(err, auth.ErrResetLinkUsed)
		v := &View{Page: "reset", Form: "reset-form", Token: token, BadLink: bad}
		if !bad {
			v.PasswordMin, _ = h.svc.CheckResetLinkMin(r.Context(), visit, token) // 0 on failure: the visitor's minimum
		}
		h.fail(w, r, visit, v, err, resetFields)
		return
	}
	h.redirect(w, r, h.prefix+"/login?done=password-reset", visit)
}

// dashboard is the pages' own landing page. An account whose grace period
// of auth.Config.RequireTwoFactor is over is sent to the security page
// instead, to set 2FA up.
func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	cu, err := h.svc.CurrentUser(r.Context(), visit)
	switch {
	case errors.Is(err, auth.ErrNotAuthenticated):
		h.redirect(w, r, h.prefix+"/login", visit)
		return
	case err != nil:
		h.problem(w, r, visit, err)
		return
	case h.svc.TwoFactorRequirement(cu).Overdue:
		h.redirect(w, r, h.prefix+twoFactorRequired, visit)
		return
	}
	pub := cu.Public()
	u := &pub
	v := &View{Page: "dashboard", User: u}
	h.notice(v, r)
	if v.Notice == "done.recovery-used" {
		v.RecoveryLeft = &u.RecoveryCodesRemaining
	}
	h.render(w, r, http.StatusOK, v, visit)
}

// security renders the security page after a post. The visit's user is
// the one read before the flow; now, if given, brings it up to date with
// what the flow did.
func (h *Handler) security(w http.ResponseWriter, r *http.Request, visit *auth.Visit, v *View, now ...func(*user.Public)) {
	u, err := h.viewer(r, visit)
	if err != nil {
		h.problem(w, r, visit, err)
		return
	}
	if u == nil {
		h.redirect(w, r, h.prefix+"/login?done=session-ended", visit)
		return
	}
	for _, f := range now {
		f(u)
	}
	v.Page, v.User = "security", u
	h.render(w, r, http.StatusOK, v, visit)
}

// setupTwoFactor starts a setup and shows its QR code and key on the
// security page (a POST answered with the page: the secret never goes in
// a URL).
func (h *Handler) setupTwoFactor(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	s, err := h.svc.SetupTwoFactor(r.Context(), visit)
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "setup-form"}, err, nil)
		return
	}
	h.security(w, r, visit, &View{Setup: setupView(s.URI, template.URL(s.QRImage))})
}

// setupView is the security page's view of a pending secret.
func setupView(uri string, qr template.URL) *Setup {
	u, err := url.Parse(uri)
	if err != nil {
		return nil
	}
	secret := u.Query().Get("secret")
	var groups []string
	for len(secret) > 4 {
		groups = append(groups, secret[:4])
		secret = secret[4:]
	}
	groups = append(groups, secret)
	return &Setup{QRImage: qr, Key: strings.Join(groups, " "), URI: uri}
}

func (h *Handler) confirmTwoFactor(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	codes, err := h.svc.ConfirmTwoFactor(r.Context(), visit, auth.ConfirmTwoFactorInput{Code: r.PostFormValue("code")})
	if err != nil {
		v := &View{Page: "security", Form: "confirm-form"}
		// Show the same QR code and key again for another try: the URI
		// the page posted back, if it is one (it is only shown to the
		// person who posted it; the code is checked against the stored
		// pending secret, never against this).
		if uri := r.PostFormValue("uri"); strings.HasPrefix(uri, "otpauth://totp/") && !errors.Is(err, auth.ErrNoPendingSetup) {
			if img, qerr := totp.QRCodeDataURL(uri, 256); qerr == nil {
				v.Setup = setupView(uri, template.URL(img))
			}
		}
		h.fail(w, r, visit, v, err, fields{"invalid_code": "confirm-code"})
		return
	}
	h.security(w, r, visit, &View{Notice: "done.2fa-enabled", Codes: codes, CodesFile: codesFile(codes)}, func(u *user.Public) {
		// The visit's user was read before the confirmation.
		u.TwoFactorEnabled, u.RecoveryCodesRemaining = true, len(codes)
	})
}

func (h *Handler) disableTwoFactor(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	err := h.svc.DisableTwoFactor(r.Context(), visit, auth.DisableTwoFactorInput{CurrentPassword: r.PostFormValue("password")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "disable-form"}, err, fields{"invalid_password": "disable-password"})
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=2fa-disabled", visit)
}

func (h *Handler) regenerateCodes(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	codes, err := h.svc.RegenerateRecoveryCodes(r.Context(), visit)
	if err != nil {
		h.fail(w, r, visit, &View{Page: "codes", Form: "regenerate-form"}, err, nil)
		return
	}
	u, _ := h.viewer(r, visit)
	if u != nil {
		u.RecoveryCodesRemaining = len(codes) // read before the flow
	}
	h.render(w, r, http.StatusOK, &View{Page: "codes", User: u, Codes: codes, CodesFile: codesFile(codes)}, visit)
}

func (h *Handler) changeEmail(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	newEmail := r.PostFormValue("newEmail")
	err := h.svc.ChangeEmail(r.Context(), visit, auth.ChangeEmailInput{NewEmail: newEmail, CurrentPassword: r.PostFormValue("password")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "email-form", Values: map[string]string{"newEmail": newEmail}}, err, fields{
			"new_email_required": "newEmail", "invalid_email": "newEmail", "email_too_long": "newEmail", "email_in_use": "newEmail",
			"invalid_password": "email-password"})
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=email-changed", visit)
}

func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	err := h.svc.ChangePassword(r.Context(), visit, auth.ChangePasswordInput{
		CurrentPassword: r.PostFormValue("currentPassword"), NewPassword: r.PostFormValue("newPassword")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "password-form"}, err, fields{
			"password_too_short": "newPassword", "password_context_word": "newPassword", "password_too_long": "newPassword", "password_invalid_characters": "newPassword",
			"invalid_password": "currentPassword"})
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=password-changed", visit)
}

// confirmNext are the pages a password confirmation returns to, by the
// key its form carries: a query never names a path of its own.
var confirmNext = map[string]string{"security": "/settings/security", "recovery-codes": "/settings/recovery-codes",
	"passkeys": "/settings/security", "identities": "/settings/security", "api-keys": "/settings/security"}

// nextKey returns key when it is one of confirmNext's, else "security".
func nextKey(key string) string {
	if _, ok := confirmNext[key]; ok {
		return key
	}
	return "security"
}

// confirmPage asks for the password before a change that needs a recent
// sign-in (2FA setup, new recovery codes).
func (h *Handler) confirmPage(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	u, ok := h.signedInUser(w, r, visit)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, &View{Page: "confirm", User: u, Next: nextKey(r.URL.Query().Get("next"))}, visit)
}

// confirmPassword renews the sign-in (auth.Service.ConfirmPassword) and
// returns to the page the person came from.
func (h *Handler) confirmPassword(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	next := nextKey(r.PostFormValue("next"))
	_, err := h.svc.ConfirmPassword(r.Context(), visit, auth.ConfirmPasswordInput{Password: r.PostFormValue("password"), Code: r.PostFormValue("code")})
	if err != nil {
		u, _ := h.viewer(r, visit) // the code field is shown to a 2FA account
		h.fail(w, r, visit, &View{Page: "confirm", Form: "confirm-password-form", Next: next, User: u}, err,
			fields{"invalid_password": "confirm-password", "two_factor_code_required": "confirm-code",
				"invalid_two_factor_code": "confirm-code", "code_already_used": "confirm-code"})
		return
	}
	target := h.prefix + confirmNext[next] + "?done=password-confirmed"
	if next == "passkeys" || next == "identities" {
		target += "#" + next // back to the list, where adding or deleting one waits
	}
	h.redirect(w, r, target, visit)
}

// endSession ends one of the user's sessions from the list: the current
// one is a sign-out; another needs a recent sign-in (the confirmation page
// comes first).
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	id := r.PostFormValue("session") // not "id": a control named id shadows the form's id in the DOM
	current := false
	if list, err := h.svc.ListSessions(r.Context(), visit); err == nil {
		for _, s := range list {
			current = current || (s.Current && s.ID == id)
		}
	}
	if err := h.svc.EndSession(r.Context(), visit, auth.EndSessionInput{ID: id}); err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "sessions-form"}, err, nil)
		return
	}
	if current {
		h.redirect(w, r, h.prefix+"/login?done=logged-out", visit)
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=session-ended-other", visit)
}

// forgetDevice takes the trust away from one of the user's browsers: its
// next sign-in asks for the second step again.
func (h *Handler) forgetDevice(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	err := h.svc.ForgetTrustedDevice(r.Context(), visit, auth.ForgetTrustedDeviceInput{ID: r.PostFormValue("device")})
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "devices-form"}, err, nil)
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=device-forgotten", visit)
}

// createAPIKey creates a personal API key and shows the security page
// with the key, the only time it is shown (no redirect: the key must not
// travel in a URL). It needs a recent sign-in, like the JSON route.
func (h *Handler) createAPIKey(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	name := r.PostFormValue("name")
	in := auth.APIKeyInput{Name: name, Scopes: r.PostForm["scope"]}
	if d := r.PostFormValue("expiresInDays"); d != "" {
		days, err := strconv.Atoi(d)
		if err != nil || days <= 0 || days > 100*365 {
			h.fail(w, r, visit, &View{Page: "security", Form: "api-key-form", Values: map[string]string{"api-key-name": name}}, auth.ErrInvalidExpiry, nil)
			return
		}
		in.ExpiresIn = time.Duration(days) * 24 * time.Hour
	}
	res, err := h.svc.CreateAPIKey(r.Context(), visit, in)
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "api-key-form", Values: map[string]string{"api-key-name": name}}, err, fields{
			"name_required": "api-key-name", "name_too_long": "api-key-name", "invalid_characters": "api-key-name"})
		return
	}
	h.security(w, r, visit, &View{NewAPIKey: &res})
}

// revokeAPIKey revokes one of the user's API keys (a session is enough).
func (h *Handler) revokeAPIKey(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	if err := h.svc.RevokeAPIKey(r.Context(), visit, r.PostFormValue("key")); err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "api-keys-list"}, err, nil)
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=api-key-revoked#apikeys", visit)
}

// passkeyForm finds, among the user's passkeys, the one a rename or delete
// form posted (its "passkey" value), and returns the id of that form on
// the security page, e.g. "passkey-rename-2", so an error shows beside it;
// "" when it is not listed (a passkey deleted meanwhile, a forged id).
func (h *Handler) passkeyForm(r *http.Request, visit *auth.Visit, kind string) string {
	id := r.PostFormValue("passkey")
	list, err := h.svc.ListPasskeys(r.Context(), visit)
	if err != nil {
		return ""
	}
	for i, p := range list {
		if p.ID == id {
			return passkeyFormID(kind, i)
		}
	}
	return ""
}

func passkeyFormID(kind string, i int) string { return "passkey-" + kind + "-" + strconv.Itoa(i) }

// renamePasskey names one of the user's passkeys (a session is enough).
func (h *Handler) renamePasskey(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	name := r.PostFormValue("name")
	_, err := h.svc.RenamePasskey(r.Context(), visit, auth.RenamePasskeyInput{ID: r.PostFormValue("passkey"), Name: name})
	if err != nil {
		form := h.passkeyForm(r, visit, "rename")
		if form == "" {
			form = "passkeys-list"
		}
		input := strings.Replace(form, "passkey-rename-", "passkey-name-", 1)
		h.fail(w, r, visit, &View{Page: "security", Form: form, Values: map[string]string{input: name}}, err, fields{
			"name_required": input, "name_too_long": input, "invalid_characters": input})
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=passkey-renamed#passkeys", visit)
}

// deletePasskey deletes one of the user's passkeys. It needs a recent
// sign-in: without one the confirmation page comes first, and returns to
// the list.
func (h *Handler) deletePasskey(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	err := h.svc.DeletePasskey(r.Context(), visit, auth.DeletePasskeyInput{ID: r.PostFormValue("passkey")})
	if err != nil {
		form := h.passkeyForm(r, visit, "delete")
		if form == "" {
			form = "passkeys-list"
		}
		h.fail(w, r, visit, &View{Page: "security", Form: form}, err, nil)
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=passkey-deleted#passkeys", visit)
}

// unlinkIdentity unlinks one of the user's provider accounts
// (auth.Service.UnlinkIdentity). It needs a recent sign-in: without one
// the confirmation page comes first, and returns to the list. The last
// way to sign in stays, with the refusal shown above the list.
func (h *Handler) unlinkIdentity(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	if err := h.svc.UnlinkIdentity(r.Context(), visit, r.PostFormValue("identity")); err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "identities-list"}, err, nil)
		return
	}
	h.redirect(w, r, h.prefix+"/settings/security?done=identity-unlinked#identities", visit)
}

// deleteAccount deletes the signed-in user's account
// (auth.Service.DeleteAccount) with the password of the confirmation page
// and, on a 2FA account, a code; then the login page says it is done.
func (h *Handler) deleteAccount(w http.ResponseWriter, r *http.Request, visit *auth.Visit) {
	err := h.svc.DeleteAccount(r.Context(), visit, auth.DeleteAccountInput{Password: r.PostFormValue("password"), Code: r.PostFormValue("code")})
	if err != nil {
		u, _ := h.viewer(r, visit) // the code field is shown to a 2FA account
		h.fail(w, r, visit, &View{Page: "delete", Form: "delete-account-form", User: u}, err,
			fields{"invalid_password": "delete-password", "two_factor_code_required": "delete-code",
				"invalid_two_factor_code": "delete-code", "code_already_used": "delete-code"})
		return
	}
	h.redirect(w, r, h.prefix+"/login?done=account-deleted", visit)
}

// export answers what authkit holds about the signed-in user as a JSON
// file (auth.Service.ExportAccount), the same document as GET
// /api/auth/export; a sign-in that is not recent confirms the password
// first.
func (h *Handler) export(w http.ResponseWriter, r *http.Request) {
	visit := h.visit(r)
	if _, ok := h.signedInUser(w, r, visit); !ok {
		return
	}
	ex, err := h.svc.ExportAccount(r.Context(), visit)
	if err != nil {
		h.fail(w, r, visit, &View{Page: "security", Form: "export"}, err, nil)
		return
	}
	body, err := json.MarshalIndent(ex, "", "  ")
	if err != nil {
		h.problem(w, r, visit, err)
		return
	}
	visit.WriteHeaders(w)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="account-data.json"`)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(body, '\n'))
}

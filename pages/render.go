package pages

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/user"
)

// View is what every template gets: the page, the visitor, the form's
// values and errors, and methods for texts (T), paths (Path) and form
// fields (Field). An app's own templates use the same.
type View struct {
	// Page is the template's name (login, security, ...), also the body's
	// data-page.
	Page string
	// User is the signed-in user, nil when signed out.
	User *user.Public
	// Notice is a message after a redirect (?done=...) or a success.
	Notice string
	// Form is the id of the form the errors and values belong to.
	Form string
	// Errors are the form's errors keyed by input id; "" holds the one
	// that belongs to no field.
	Errors map[string]string
	// Values are the values typed into the form, to show again (never a
	// password or a code).
	Values map[string]string
	// Token is the {token} of a mailed link's page.
	Token string
	// BadLink is set on a reset page whose link cannot be used: the page
	// offers a new one.
	BadLink bool
	// Setup is the pending 2FA secret shown on the security page.
	Setup *Setup
	// Codes are recovery codes to show this once, with CodesFile their
	// download (a data: URL of a text file).
	Codes     []string
	CodesFile template.URL
	// RecoveryOpen opens the recovery-code part of the 2FA page.
	RecoveryOpen bool
	// PasswordMin is the minlength of a new password's fields when it is
	// not the signed-in user's (a reset link's account); 0: the visitor's.
	PasswordMin int
	// Next is the key of the page a password confirmation returns to.
	Next string
	// Sessions are the signed-in user's sessions, and Devices the
	// browsers they trusted, on the security page; nil when the Service
	// keeps no session records or trusted devices.
	Sessions []auth.SessionInfo
	Devices  []auth.TrustedDeviceInfo
	// APIKeys are the signed-in user's personal API keys on the security
	// page, when auth.Config.APIKeys is on; NewAPIKey is the key just
	// created, shown this once.
	APIKeys   []auth.APIKeyInfo
	NewAPIKey *auth.NewAPIKey
	// RecoveryLeft is set on the dashboard after a recovery-code login.
	RecoveryLeft *int
	// Passkeys are the signed-in user's passkeys on the security page,
	// when Config.Passkeys is set.
	Passkeys []auth.PasskeyInfo
	// Identities are the user's linked provider accounts, for the
	// security page when Config.Social is set, each with its provider's
	// label; Recent says whether the sign-in is recent enough to link
	// another one without confirming the password first.
	Identities []LinkedIdentity
	Recent     bool
	// NoPassword is set on the security page of an account without a
	// password (signed up by email, a social provider or a passkey): the
	// page offers "Set a password" (the reset) instead of the change, and
	// asks for no current password where a recent authentication stands
	// for it.
	NoPassword bool
	// PasskeyFactor is set on the 2FA page when the pending login's user
	// has a passkey to finish it with (and Config.Passkeys is set).
	PasskeyFactor bool
	// EmailCode is the mailed-code part of the 2FA page, nil when it is
	// not offered: the Service sends no codes (auth.Config.EmailCode), or
	// the pending login's user has no verified address.
	EmailCode *EmailCodeStep
	// SignInSent is set on the email sign-in page once a code was asked
	// for: the page shows the code's field (Values["email"] is the
	// address).
	SignInSent bool

	h             *Handler
	lang          *i18n.Language
	focus         string // the input that takes the focus
	emailCodeSent bool   // a code was mailed for this login: show its field
}

// EmailCodeStep is the 2FA page's offer of a code by mail.
type EmailCodeStep struct {
	// Sent is set once a code was mailed: the page shows the field for it
	// and "send a new code" instead of "email me a code".
	Sent bool
	// Address is where the code went, shown in full: whoever sees this
	// page typed it at the password step (the login is by email), so it
	// tells them nothing new, and it tells a person with several
	// addresses which mailbox to open. "" when the pending login is gone.
	Address string
}

// EmailCodeField is the field of a mailed code. Right after the mail it
// takes the focus, unless an error of the page does.
func (v *View) EmailCodeField() Field {
	f := v.Field("email-code", "code", "otp", "one-time-code", "field.email_code")
	if v.EmailCode != nil && v.EmailCode.Sent && !v.Invalid() {
		f.Autofocus = true
	}
	return f
}

// Setup is a pending TOTP secret as the security page shows it.
type Setup struct {
	QRImage template.URL // PNG data: URL
	Key     string       // the secret in groups of four
	URI     string       // the otpauth:// URI, posted back to show the QR again after a wrong code
}

// Theme returns the configured theme.
func (v *View) Theme() Theme { return v.h.cfg.Theme }

// WarnPlainHTTP reports whether the pages carry the plain-HTTP warning.
func (v *View) WarnPlainHTTP() bool { return v.h.cfg.WarnPlainHTTP }

// Lang is the page's language tag: the visit's language when the pages
// have its texts, else "en" (the texts fall back to English).
func (v *View) Lang() string {
	if v.lang == nil {
		return "en"
	}
	for _, c := range v.h.texts {
		if c.Lookup(v.lang.Tag()) != nil {
			return v.lang.Tag().String()
		}
	}
	return "en"
}

// T returns the text of key in the page's language, English when the
// language has none; vars alternate names and values ({n} → "3").
func (v *View) T(key string, vars ...any) string {
	return v.h.text(v.lang, key, vars...)
}

// Path returns the path of a page under the prefix: Path "/login".
func (v *View) Path(page string) string { return v.h.prefix + page }

// Asset returns the path of an asset: Asset "app.css".
func (v *View) Asset(name string) string { return v.h.prefix + "/assets/" + name }

// AfterLogin is where a login goes.
func (v *View) AfterLogin() string { return v.h.afterLogin }

// AfterRegister is where a sign-up goes: AfterLogin saying the account
// was made, as after the register form.
func (v *View) AfterRegister() string { return withQuery(v.h.afterLogin, "done", "registered") }

// Enabled reports whether a feature of the Service is on ("registration",
// "two-factor", "email-change", "password-reset", "password-change").
func (v *View) Enabled(feature string) bool { return v.h.svc.Enabled(auth.Feature(feature)) }

// Title is the page's title.
func (v *View) Title() string { return v.T("title." + v.Page) }

// FocusSummary reports whether the error summary takes the focus: when
// an error belongs to no field.
func (v *View) FocusSummary() bool { return v.firstInvalid() == "" }

// Invalid reports whether the form has any error.
func (v *View) Invalid() bool { return len(v.Errors) > 0 }

// Summary lists the form's errors for the error summary, the form-level
// one first, each with the id of its input ("" for none).
func (v *View) Summary() []Problem {
	var out []Problem
	if msg, ok := v.Errors[""]; ok {
		out = append(out, Problem{Message: msg})
	}
	for _, id := range slices.Sorted(maps.Keys(v.Errors)) {
		if id != "" {
			out = append(out, Problem{Input: id, Message: v.Errors[id]})
		}
	}
	return out
}

// Problem is one error of the summary.
type Problem struct {
	Input   string // the input's id, "" for the form as a whole
	Message string
}

// Posted reports whether the form with the given id is the one posted and
// answered with errors: its error summary shows.
func (v *View) Posted(form string) bool { return v.Form == form && len(v.Errors) > 0 }

// Field describes one input for the "field" template: Field id name type
// autocomplete labelKey. The label is T labelKey; an error of the posted
// form for id shows beside it, marks it aria-invalid and focuses it.
func (v *View) Field(id, name, typ, autocomplete, labelKey string) Field {
	f := Field{ID: id, Name: name, Type: typ, Autocomplete: autocomplete, Label: v.T(labelKey),
		Value: v.Values[id], Error: v.Errors[id], Hint: v.hint(labelKey)}
	if f.Type == "password" {
		f.Value = ""
		f.Show, f.Hide = v.T("password.show"), v.T("password.hide")
		if autocomplete == "new-password" {
			f.MinLength = v.PasswordMin
			if f.MinLength <= 0 {
				// The account's own minimum: a signed-in user's factors
				// decide it; a registration has no second factor yet.
				f.MinLength = v.h.svc.PasswordMinLength(v.User != nil && v.User.TwoFactorEnabled)
			}
		}
	}
	if f.Error != "" {
		// The first invalid field of the form takes the focus.
		f.Autofocus = v.firstInvalid() == id
	}
	return f
}

// hint is the text of labelKey+".hint", "" when no catalog has one.
func (v *View) hint(labelKey string) string {
	if hint := v.h.text(v.lang, labelKey+".hint"); hint != labelKey+".hint" {
		return hint
	}
	return ""
}

// PasskeyOption describes the passkey box a page offers beside its form,
// for the "passkey-option" template: PasskeyOption id kind next labelKey.
// The box stays hidden until the script finds WebAuthn in the browser; its
// button (id "passkey-"+id) reads T labelKey, with T labelKey.hint under it
// when a catalog has one. kind is the ceremony the script runs
// (data-passkey: signin, second-factor or signup) and next the page it
// opens after it.
func (v *View) PasskeyOption(id, kind, next, labelKey string) PasskeyOption {
	return PasskeyOption{ID: id, Kind: kind, Next: next, Label: v.T(labelKey), Hint: v.hint(labelKey),
		Or: v.T("passkey.or"), Cancelled: v.T("passkey.cancelled"), Failed: v.T("passkey.failed")}
}

// PasskeyOption is one passkey box of the "passkey-option" template (see
// View.PasskeyOption).
type PasskeyOption struct {
	ID, Kind, Next    string
	Label, Hint, Or   string
	Cancelled, Failed string // the script's messages when the ceremony is cancelled or fails
}

// firstInvalid is the id of the input that takes the focus: "" (the
// summary) when an error belongs to no field, else the first field with an
// error in the summary's order. A flow returns one error, so there is one.
func (v *View) firstInvalid() string {
	if _, ok := v.Errors[""]; ok {
		return "" // the summary takes the focus
	}
	if v.focus == "" && len(v.Errors) > 0 {
		v.focus = slices.Sorted(maps.Keys(v.Errors))[0]
	}
	return v.focus
}

// Field is one labelled input.
type Field struct {
	ID, Name, Type, Autocomplete, Label, Value, Error, Hint string
	Show, Hide                                              string // the show-password toggle's texts
	MinLength                                               int
	Autofocus                                               bool
}

// text looks key up in the language (the app's catalog first, then the
// built-in), then in English; vars alternate names and values.
func (h *Handler) text(l *i18n.Language, key string, vars ...any) string {
	var m map[string]string
	if len(vars) > 1 {
		m = map[string]string{}
		for i := 0; i+1 < len(vars); i += 2 {
			name, _ := vars[i].(string)
			m[name] = toString(vars[i+1])
		}
	}
	if l != nil {
		for _, c := range h.texts {
			if tl := c.Lookup(l.Tag()); tl != nil {
				if t := tl.Text(key, m); t != "" {
					return t
				}
			}
		}
	}
	t, ok := english[key]
	if !ok {
		return key
	}
	for k, val := range m {
		t = strings.ReplaceAll(t, "{"+k+"}", val)
	}
	return t
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case *int:
		if x != nil {
			return strconv.Itoa(*x)
		}
	}
	return ""
}

// render writes page with status, with the visit's cookies and headers.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, v *View, visit *auth.Visit) {
	v.h = h
	if visit != nil {
		v.lang = visit.Language()
	}
	if v.Page == "security" && v.User != nil && visit != nil {
		h.fillSecurity(r, visit, v)
	}
	if v.Page == "confirm" && v.User != nil && visit != nil {
		if u, err := h.svc.CurrentUser(r.Context(), visit); err == nil {
			v.NoPassword = u.PasswordHash == ""
		}
	}
	if v.Page == "twofactor" && visit != nil {
		h.fillTwoFactor(r, visit, v)
	}
	var buf bytes.Buffer
	if err := h.tmpl[v.Page].ExecuteTemplate(&buf, "layout", v); err != nil {
		h.log.ErrorContext(r.Context(), "authkit pages: template", "page", v.Page, "err", err)
		h.serverError(w, r, v.lang)
		return
	}
	if visit != nil {
		visit.WriteHeaders(w)
	}
	writePage(w, status, v.Lang(), buf.Bytes())
}

// writePage writes a page's HTML with status and the pages' headers.
func writePage(w http.ResponseWriter, status int, lang string, page []byte) {
	hd := w.Header()
	secure(hd)
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Language", lang)
	hd.Add("Vary", "Accept-Language")
	w.WriteHeader(status)
	_, _ = w.Write(page)
}

// serverError answers 500 with an HTML page that says something went
// wrong, in the visit's language: the problem page, or, should that
// template fail too (an app's own override), a page that needs no
// template. It is HTML, like every other answer of the pages, so that the
// script shows it in place instead of a network error. No cookie or
// header of the visit is written: what failed may have been half done.
func (h *Handler) serverError(w http.ResponseWriter, r *http.Request, lang *i18n.Language) {
	v := &View{Page: "problem", h: h, lang: lang, Errors: map[string]string{"": h.text(lang, "error.server")}}
	var buf bytes.Buffer
	if err := h.tmpl["problem"].ExecuteTemplate(&buf, "layout", v); err != nil {
		h.log.ErrorContext(r.Context(), "authkit pages: template", "page", "problem", "err", err)
		buf.Reset()
		fmt.Fprintf(&buf, "<!doctype html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\"><title>%s</title></head>"+
			"<body><main id=\"main\"><h1>%s</h1><p>%s</p><p><a href=\"%s\">%s</a></p></main></body></html>\n",
			template.HTMLEscapeString(v.Lang()), template.HTMLEscapeString(v.T("title.problem")),
			template.HTMLEscapeString(v.T("title.problem")), template.HTMLEscapeString(v.T("error.server")),
			template.HTMLEscapeString(h.afterLogin), template.HTMLEscapeString(v.T("problem.back")))
	}
	writePage(w, http.StatusInternalServerError, v.Lang(), buf.Bytes())
}

// redirect answers 303 See Other to target with the visit's cookies: the
// GET after a POST that succeeded.
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, target string, visit *auth.Visit) {
	if visit != nil {
		visit.WriteHeaders(w)
	}
	secure(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// notFound answers the 404 page.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	visit := h.svc.Visit(auth.HTTPRequest(r, nil))
	h.render(w, r, http.StatusNotFound, &View{Page: "notfound"}, visit)
}

// problem answers a page that only says what went wrong (a cross-origin
// post, an unreadable form, a backend down), with err's status.
func (h *Handler) problem(w http.ResponseWriter, r *http.Request, visit *auth.Visit, err error) {
	e := auth.AsError(err)
	if e == nil {
		e = auth.ErrInternal
	}
	var known *auth.Error
	if !errors.As(err, &known) {
		h.log.ErrorContext(r.Context(), "authkit pages: unexpected error", "path", r.URL.Path, "err", err)
	}
	h.render(w, r, e.Status, &View{Page: "problem", Errors: map[string]string{"": h.svc.Modules().Text(visit, err)}}, visit)
}

// codesFile is a data: URL of a text file of the codes, one a line, for
// the download link (it works without script).
func codesFile(codes []string) template.URL {
	return template.URL("data:text/plain;charset=utf-8," + url.PathEscape(strings.Join(codes, "\n")+"\n"))
}

// fillSecurity lists the user's sessions and trusted browsers for the
// security page, when the Service keeps them. A list that cannot be read
// is left out and logged: the rest of the page still works.
func (h *Handler) fillSecurity(r *http.Request, visit *auth.Visit, v *View) {
	if u, err := h.svc.CurrentUser(r.Context(), visit); err == nil {
		v.NoPassword = u.PasswordHash == ""
	}
	if h.svc.HasSessionRecords() {
		list, err := h.svc.ListSessions(r.Context(), visit)
		if err != nil {
			h.log.WarnContext(r.Context(), "authkit pages: session list", "err", err)
		}
		v.Sessions = list
	}
	if h.cfg.Passkeys != nil {
		list, err := h.svc.ListPasskeys(r.Context(), visit)
		if err != nil {
			h.log.WarnContext(r.Context(), "authkit pages: passkeys", "err", err)
		}
		v.Passkeys = list
	}
	if h.identitiesOn() {
		list, err := h.svc.Identities(r.Context(), visit)
		if err != nil {
			h.log.WarnContext(r.Context(), "authkit pages: identities", "err", err)
		}
		for _, id := range list {
			v.Identities = append(v.Identities, LinkedIdentity{IdentityInfo: id, Label: h.providerLabel(id.Provider)})
		}
		_, err = h.svc.RecentUser(r.Context(), visit)
		v.Recent = err == nil
	}
	if h.svc.HasAPIKeys() {
		list, err := h.svc.ListAPIKeys(r.Context(), visit)
		if err != nil {
			h.log.WarnContext(r.Context(), "authkit pages: api keys", "err", err)
		}
		v.APIKeys = list
	}
	if h.svc.HasTrustedDevices() {
		list, err := h.svc.TrustedDevices(r.Context(), visit)
		if err != nil {
			h.log.WarnContext(r.Context(), "authkit pages: trusted devices", "err", err)
		}
		v.Devices = list
	}
}

// ConfirmNext is the path (under the pages' prefix) the confirmation
// page returns to after a passkey re-authentication: the page its Next key
// names.
func (v *View) ConfirmNext() string { return confirmNext[nextKey(v.Next)] }

// When formats a time of the session and device lists: UTC, to the minute.
func (v *View) When(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Time is When as a <time> element the script shows in the viewer's own
// time zone and language (the page without the script says UTC). Put it in
// a text with TH.
func (v *View) Time(t time.Time) template.HTML {
	if t.IsZero() {
		return "-"
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `" data-local>` + v.When(t) + `</time>`)
}

// TH is T for a text with HTML in it: each var that is a template.HTML
// (Time's element) goes in as it is, the text and every other var are
// escaped.
func (v *View) TH(key string, vars ...any) template.HTML {
	var parts []template.HTML
	plain := slices.Clone(vars)
	for i := 1; i < len(plain); i += 2 {
		if h, ok := plain[i].(template.HTML); ok {
			plain[i] = fmt.Sprintf("\u27e6%d\u27e7", len(parts)) // ⟦n⟧: survives escaping, in no text
			parts = append(parts, h)
		}
	}
	out := template.HTMLEscapeString(v.T(key, plain...))
	for i, h := range parts {
		out = strings.Replace(out, fmt.Sprintf("\u27e6%d\u27e7", i), string(h), 1)
	}
	return template.HTML(out)
}

// TrustOffered reports whether the 2FA page offers to trust the browser.
func (v *View) TrustOffered() bool { return v.h.svc.HasTrustedDevices() }

// SessionsShown reports whether the security page lists sessions.
func (v *View) SessionsShown() bool { return v.h.svc.HasSessionRecords() }

// DevicesShown reports whether the security page lists trusted browsers.
func (v *View) DevicesShown() bool { return v.h.svc.HasTrustedDevices() }

// APIKeysShown reports whether the security page has the API-key section
// (auth.Config.APIKeys).
func (v *View) APIKeysShown() bool { return v.h.svc.HasAPIKeys() }

// APIKeyScopeChoices are the scopes the create form offers.
func (v *View) APIKeyScopeChoices() []string { return v.h.svc.APIKeyScopes() }

// APIKeyScopesText is a key's scopes for its line in the list.
func (v *View) APIKeyScopesText(scopes []string) string {
	if len(scopes) == 0 {
		return v.T("apikeys.no_scopes")
	}
	return v.T("apikeys.scopes_list", "scopes", strings.Join(scopes, ", "))
}

// Lifetime is one choice of the create form's lifetime.
type Lifetime struct {
	Days    int
	Default bool
}

// APIKeyLifetimeChoices are the lifetimes the create form offers: a week,
// a month, three months and a year, those up to the longest allowed, and
// the default one (selected).
func (v *View) APIKeyLifetimeChoices() []Lifetime {
	def, longest := v.h.svc.APIKeyLifetimes()
	defDays := max(int(def/(24*time.Hour)), 1)
	days := []int{}
	for _, d := range []int{7, 30, 90, 365} {
		if time.Duration(d)*24*time.Hour <= longest {
			days = append(days, d)
		}
	}
	if !slices.Contains(days, defDays) {
		days = append(days, defDays)
		slices.Sort(days)
	}
	out := make([]Lifetime, len(days))
	for i, d := range days {
		out[i] = Lifetime{Days: d, Default: d == defDays}
	}
	return out
}

// fillTwoFactor offers the other factors of the 2FA page, from the user
// of the visit's pending login, read once: a passkey when the user has one
// (and Config.Passkeys is set), a mailed code when the Service sends them
// and the user's address is verified. A pending login that is gone or a
// store that fails offers neither (the code forms still work and say what
// is wrong), except that the email-code forms stay when it is their error
// the page shows.
func (h *Handler) fillTwoFactor(r *http.Request, visit *auth.Visit, v *View) {
	if h.cfg.Passkeys == nil && !h.svc.HasEmailCodes() {
		return // nothing to offer: no store read
	}
	u, err := h.svc.Modules().PendingTwoFactorUser(r.Context(), visit)
	if err != nil {
		var known *auth.Error
		if !errors.As(err, &known) {
			h.log.WarnContext(r.Context(), "authkit pages: pending login", "err", err)
		}
		u = nil
	}
	if u != nil && h.cfg.Passkeys != nil {
		v.PasskeyFactor = h.hasPasskey(r, u)
	}
	if !h.svc.HasEmailCodes() {
		return
	}
	posted := v.Invalid() && (v.Form == "email-send-form" || v.Form == "email-code-form")
	switch {
	case u != nil && !u.EmailVerifiedAt.IsZero():
		v.EmailCode = &EmailCodeStep{Sent: v.emailCodeSent, Address: u.Email}
	case posted:
		v.EmailCode = &EmailCodeStep{Sent: v.emailCodeSent}
	}
}

// hasPasskey reports whether u, the user of a pending 2FA login, has a
// passkey: only then does the 2FA page offer one.
func (h *Handler) hasPasskey(r *http.Request, u *user.User) bool {
	st, _ := h.svc.Modules().PasskeyStore() // checked in New
	keys, err := st.ListPasskeys(r.Context(), u.ID)
	if err != nil {
		h.log.WarnContext(r.Context(), "authkit pages: passkeys of a pending login", "err", err)
		return false
	}
	return len(keys) > 0
}

// PasskeysOn reports whether the pages offer passkeys (Config.Passkeys).
func (v *View) PasskeysOn() bool { return v.h.cfg.Passkeys != nil }

// PasskeySignIn reports whether the login page offers to sign in with a
// passkey alone (the button and the browser's autofill).
func (v *View) PasskeySignIn() bool {
	return v.h.cfg.Passkeys != nil && !v.h.cfg.Passkeys.SecondFactorOnly
}

// SocialLink is one provider's button: its start route, returning to the
// page after login.
type SocialLink struct {
	Href, Label string
}

// Social returns the buttons of Config.Social.
func (v *View) Social() []SocialLink {
	out := make([]SocialLink, 0, len(v.h.cfg.Social))
	for _, p := range v.h.cfg.Social {
		out = append(out, SocialLink{Href: SocialPath + "/" + url.PathEscape(p.Name) + "/start?returnTo=" + url.QueryEscape(v.h.afterLogin), Label: p.Label})
	}
	return out
}

// LinkedIdentity is one of the user's linked provider accounts as the
// security page lists it.
type LinkedIdentity struct {
	auth.IdentityInfo
	Label string // the provider's label (Config.Social), or its name
}

// identitiesOn reports whether the security page lists linked provider
// accounts: Config.Social is set and the user store holds identities.
func (h *Handler) identitiesOn() bool {
	if len(h.cfg.Social) == 0 {
		return false
	}
	_, ok := h.svc.Modules().IdentityStore()
	return ok
}

func (h *Handler) providerLabel(name string) string {
	for _, p := range h.cfg.Social {
		if p.Name == name {
			return p.Label
		}
	}
	return name
}

// IdentitiesOn reports whether the security page lists linked provider
// accounts.
func (v *View) IdentitiesOn() bool { return v.h.identitiesOn() }

// LinkButton is one "Link <provider>" button of the security page: a form
// posting to the social module's link route (Action), or, when the
// sign-in is not recent, a link to the password confirmation first.
type LinkButton struct {
	Action, Label string
}

// afterLink is where a link at the provider returns to: the security
// page, saying so.
func (h *Handler) afterLink() string { return h.prefix + "/settings/security?done=identity-linked" }

// LinkButtons returns a button per provider of Config.Social.
func (v *View) LinkButtons() []LinkButton {
	out := make([]LinkButton, 0, len(v.h.cfg.Social))
	back := url.QueryEscape(v.h.afterLink())
	for _, p := range v.h.cfg.Social {
		out = append(out, LinkButton{Action: SocialPath + "/" + url.PathEscape(p.Name) + "/link?returnTo=" + back, Label: p.Label})
	}
	return out
}

// PasskeyScript is the path of the passkeys module's script.
func (v *View) PasskeyScript() string { return PasskeysPath + "/passkeys.js" }

// EmailSignInOn reports whether the Service offers sign-in by email
// (auth.Config.EmailSignIn): the login page links to it.
func (v *View) EmailSignInOn() bool { return v.h.svc.HasEmailSignIn() }

// EmailAutocomplete is the autocomplete of the login page's email field:
// with passwordless passkeys also "webauthn", so that the browser offers
// the user's passkeys in the field's autofill (conditional UI).
func (v *View) EmailAutocomplete() string {
	if v.PasskeySignIn() {
		return "username webauthn"
	}
	return "username"
}

// PasskeyNameField is the rename field of the i-th passkey of the list,
// holding its name until the person types another.
func (v *View) PasskeyNameField(i int, name string) Field {
	id := "passkey-name-" + strconv.Itoa(i)
	f := v.Field(id, "name", "text", "off", "passkeys.name")
	if _, typed := v.Values[id]; !typed {
		f.Value = name
	}
	return f
}

// PasskeyForm is the id of the rename ("rename") or delete ("delete") form
// of the i-th passkey of the list.
func (v *View) PasskeyForm(kind string, i int) string { return passkeyFormID(kind, i) }

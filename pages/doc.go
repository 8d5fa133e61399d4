// Package pages is authkit's pages as an http.Handler any app mounts: log
// in with a password and a TOTP or recovery code (or a mailed code, see
// Email codes), register, verify the email from the mailed link, resend
// it, forgot and reset the password, a dashboard, and the security
// settings (2FA setup with the QR code and the key by hand, recovery codes
// with copy and download, regenerating them after a confirmation, 2FA off,
// email change, password change, sign out, sign out everywhere), a 404
// page and the assets, and, beside the passkeys module, the passkey steps.
// It needs the standard library and core only.
//
//	svc, _ := auth.New(cfg) // cfg.VerifyEmailPath, cfg.ResetPasswordPath = pages.MailLinks("/auth")
//	p, _ := pages.New(svc, pages.Config{Prefix: "/auth"})
//	mux.Handle("/auth/", p) // net/http
//	r.Any("/auth/*page", gin.WrapH(p)) // gin
//	app.All("/auth/*", fiberauth.HTTPHandler(p)) // fiber
//
// At the root (Prefix ""), mount it as the app's fallback: mux.Handle("/",
// p), gin's r.NoRoute(gin.WrapH(p)), fiber's app.Use(fiberauth.HTTPHandler(p))
// after the other routes; then every unknown path answers its 404 page.
//
// # Without JavaScript
//
// Every form posts to a page route of this handler, never to the JSON API.
// The handler checks the origin as the JSON routes do
// ([auth.Service.CheckOrigin]), calls the same typed method the JSON route
// calls (Login, VerifyTwoFactor, ChangeEmail, ...), so rate limits,
// lock-out, TOTP replay protection and features apply to form posts alike,
// writes the Visit's cookies, and answers a page with the error beside its
// field (aria-invalid, aria-describedby, an error summary with role=alert,
// the focus on the summary or the field) or a 303 redirect to the next page
// (POST/redirect/GET). No password or code ever goes into a URL. The
// script (assets/app.js, loaded from the handler's own path under a strict
// Content-Security-Policy) only enhances: it sends forms with fetch and
// puts the answer in place without a reload, shows the QR code inline,
// adds "show password" toggles and the Copy button of recovery codes.
//
// # Passkeys
//
// With [Config.Passkeys] set and the passkeys module
// (github.com/authkit-go/authkit/passkeys) on the same Service, its routes
// served by the framework module on the same origin at [PasskeysPath], the
// pages gain the passkey steps: "Sign in with a
// passkey" on the login page, whose email field also offers the user's
// passkeys in the browser's autofill (autocomplete="username webauthn",
// conditional UI), "Use a passkey" on the 2FA page of a user who has one,
// and on the security page the user's passkeys (name, added, last used,
// synced or on one device) with "Add a passkey". The pages import no
// WebAuthn code: they load the module's script (PasskeysPath +
// "/passkeys.js") before their own, which calls it. Renaming and deleting
// are plain forms on [auth.Service.RenamePasskey] and
// [auth.Service.DeletePasskey]; a deletion after an old sign-in, like
// adding one, goes through the password confirmation first. What needs
// the script is rendered hidden, or as a <template> the script inserts (the
// add form), so without JavaScript no control is dead and every other
// step still works.
//
// # Email codes
//
// When the Service sends sign-in codes by mail ([auth.Service.HasEmailCodes],
// auth.Config.EmailCode) and the pending login's user has a verified
// address, the 2FA page offers "Email me a code instead": a plain form
// that calls [auth.Service.SendTwoFactorEmailCode] and returns to the page
// with the code's field, where the code went, and "Send a new code". The
// code's form calls [auth.Service.VerifyTwoFactorEmailCode] and signs in as
// the TOTP form does (the password step's "keep me signed in", "trust this
// browser", AfterLogin). The address is shown in full: only someone who
// typed it at the password step sees the page.
//
// # Routes
//
// Under the prefix: GET and POST /login, /register, /2fa, /forgot-password,
// /reset-password/{token}, /resend-verification; POST /2fa/recover,
// /2fa/email-code and /2fa/email-code/verify (with email codes on),
// /email-sign-in and /email-sign-in/verify (with sign-in by email on,
// auth.Config.EmailSignIn; GET /email-sign-in and GET and POST
// /email-sign-in/{token}, the mailed link's page: a GET shows a button
// that posts),
// /logout, /logout-all; GET /verify-email/{token} (verifies, then
// redirects); GET /dashboard, /settings/security, /settings/recovery-codes
// (the confirmation; POST replaces the codes); POST /settings/2fa/setup,
// /settings/2fa/confirm, /settings/2fa/disable, /settings/email,
// /settings/password; GET and POST /settings/confirm-password (the
// password confirmation a 2FA change needs after an old sign-in,
// auth.Config.ReauthWindow); POST /settings/sessions/end and
// /settings/trusted-devices/forget when the Service keeps session records
// and trusted devices (the security page then lists them, and the 2FA page
// offers to trust the browser); POST /settings/passkeys/rename and
// /settings/passkeys/delete with [Config.Passkeys]; POST
// /settings/api-keys/create and /settings/api-keys/revoke with
// auth.Config.APIKeys (the security page's #apikeys section: the new key
// is shown once, on the answer to the create, never in a URL); GET
// /assets/{file}.
// An account without a password (signed up by email, a social provider or
// a passkey) sees "Set a password" (the reset page) instead of the
// password change, no password field on the 2FA-disable and email forms,
// and on the confirmation page, with [Config.Passkeys], a button that
// re-authenticates with a passkey (the passkeys module's reauth ceremony,
// which needs the script) instead of the password form.
// A switched-off feature
// (auth.Config.Disable) takes its pages away; they answer the 404 page.
//
// # Templates and themes
//
// The templates are html/template files: layout.html (the frame: "layout"),
// parts.html (the "summary", "field", "codes-box", "passkey-option" and
// "social-box" parts), and one per
// page defining "content": login, register, twofactor, verify, resend,
// forgot, reset, dashboard, security, codes, notfound, problem (.html).
// [Config.Templates] replaces any of them by name; only layout.html gives
// the pages the app's own frame. Templates see a [View]: .T "key" for a
// text, .Path "/login" for a path under the prefix, .Field for a labelled
// input with its error, .PasskeyOption for the passkey box beside a form.
//
// [Config.Theme] sets the app name, a logo, colours, the font and the corner
// radius as CSS custom properties (theme.css, made from the Theme and
// served beside the assets), with no template touched. The default theme has a dark variant that follows the system's
// prefers-color-scheme.
//
// # Languages
//
// A page is in the language of its [auth.Visit]: the Service's
// auth.Config.Catalog match of Accept-Language, the language of the API's
// errors and of the mails. Without a catalog every page is English. The
// pages' own texts live in a pages-local catalog in the same i18n format
// (pages/locales/de.json, German built in), looked up by the Visit's
// language; the error texts beside the fields are the Service's own
// ([auth.Modules.Text]). [Config.Texts] adds languages.
package pages

package auth

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/session"
)

// openapi.json is written from the table below, so that the document and
// the code share one list of error codes (Codes) and one list of routes
// (routes): go test ./auth -run TestOpenAPIDocumentUpToDate -update.
// Each row names the conditions its route's flow returns (errs, the *Error
// values themselves, read from the flow); conditions adds those every
// route of its shape answers with (its body, its method, its path
// parameter, 500 and 503). For each status the document lists exactly
// those codes; the drift test fails a route that answers another.
// The e2e module's openapi package checks every answer of the flow suite
// against it on all three frameworks.

var updateOpenAPI = flag.Bool("update", false, "rewrite openapi.json from openapi_gen_test.go")

type obj = map[string]any

// apiOp is one route of the document.
type apiOp struct {
	method, path string
	id, summary  string
	desc         string
	auth         string   // "", "session", "pending"
	fields       obj      // the request body's properties; nil: no body
	required     []string // of fields
	ok           obj      // the 200 body's schema
	cookies      string   // the cookies a 200 may set
	param        string   // the path parameter's description

	// errs are the conditions of the route's own flow, read from it: the
	// ones every route of its shape answers with are added by
	// conditions. A 429 among them makes the route a limited one
	// (X-RateLimit-* headers on its answers).
	errs []*Error
	// hooks names the hooks whose own *Error the route answers with
	// (400 and 403 then allow an app's code beside authkit's).
	hooks string
	// storeless: the route reads no store and no limit, so it never
	// answers 503.
	storeless bool
}

func oaRef(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func oaStr(desc string) obj { return obj{"type": "string", "description": desc} }

func oaBool(desc string) obj { return obj{"type": "boolean", "description": desc} }

func oaMessage(desc string) obj {
	return obj{"$ref": "#/components/schemas/Message", "description": desc}
}

func oaClosed(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

var secondStep = obj{
	"code":        oaStr("the code"),
	"remember":    oaBool("when sent, overrides the remember flag given at login"),
	"trustDevice": oaBool("true trusts this browser (with Config.TrustedDevices): the authkit_trusted cookie"),
}

const (
	sessionCookies = "authkit_session (the session), authkit_device (this browser signed in before)"
	loginCookies   = sessionCookies + "; 2fa_pending is deleted"
)

// The conditions of the second step that every way of giving it shares
// (pendingUser): the pending cookie missing, expired or of a deleted
// account, the per-user 2FA limit.
var pendingStep = []*Error{ErrNoPendingTwoFactor, ErrTwoFactorExpired, ErrInvalidSession, ErrTooManyTwoFactor}

// The conditions of a new password (checkPolicy). Not its
// ErrPasswordInvalid: every flow checks the password with checkText
// first, which refuses what Policy.Check calls invalid (invalid UTF-8, a
// control character, also after NFKC) as invalid_characters, naming the
// field.
var newPassword = []*Error{ErrPasswordTooShort, ErrPasswordTooLong}

// The conditions of a typed-in address (normalizeEmail).
var typedEmail = []*Error{ErrEmailRequired, ErrEmailTooLong, ErrInvalidEmail}

// The conditions of the current password where a signed-in user gives it
// (checkPassword).
var currentPassword = []*Error{ErrInvalidPassword, ErrTooManyPasswordEntries}

// cat joins lists of conditions.
func cat(lists ...[]*Error) []*Error { return slices.Concat(lists...) }

var apiOps = []apiOp{
	{method: "POST", path: "/api/login", id: "login", summary: "Log in with email and password",
		desc:   "The spec's path; /api/auth/login is the same handler. With 2FA on, answers requiresTwoFactor and the 2fa_pending cookie instead of a session.",
		fields: obj{"email": oaStr("the account's email"), "password": oaStr("the password"), "remember": oaBool("a 30-day session instead of 24 hours")}, required: []string{"email", "password"},
		ok:   oaClosed(obj{"success": obj{"const": true}, "requiresTwoFactor": obj{"const": true}}),
		errs: []*Error{ErrEmailPasswordRequired, ErrInvalidCredentials, ErrTooManyLogins}, hooks: "AfterLogin",
		cookies: sessionCookies + "; or 2fa_pending when a second factor follows; authkit_trusted is kept"},
	{method: "POST", path: "/api/auth/login", id: "authLogin", summary: "Log in with email and password (authkit's path)",
		desc:   "As POST /api/login.",
		fields: obj{"email": oaStr("the account's email"), "password": oaStr("the password"), "remember": oaBool("a 30-day session instead of 24 hours")}, required: []string{"email", "password"},
		ok:   oaClosed(obj{"success": obj{"const": true}, "requiresTwoFactor": obj{"const": true}}),
		errs: []*Error{ErrEmailPasswordRequired, ErrInvalidCredentials, ErrTooManyLogins}, hooks: "AfterLogin",
		cookies: sessionCookies + "; or 2fa_pending when a second factor follows"},
	{method: "POST", path: "/api/2fa/verify", id: "verifyTwoFactor", summary: "Finish a login with a TOTP code", auth: "pending",
		fields: secondStep, required: []string{"code"}, ok: oaClosed(obj{"success": obj{"const": true}}, "success"),
		errs: cat(pendingStep, []*Error{ErrInvalidTwoFactorCode, ErrCodeUsed}), hooks: "AfterLogin",
		cookies: loginCookies + "; authkit_trusted with trustDevice"},
	{method: "POST", path: "/api/2fa/recover", id: "recoverTwoFactor", summary: "Finish a login with a recovery code", auth: "pending",
		fields: secondStep, required: []string{"code"}, ok: oaClosed(obj{"success": obj{"const": true}, "remainingCodes": obj{"type": "integer", "minimum": 0}}, "success", "remainingCodes"),
		errs: cat(pendingStep, []*Error{ErrInvalidRecoveryCode}), hooks: "AfterLogin",
		cookies: loginCookies + "; authkit_trusted with trustDevice"},
	{method: "POST", path: "/api/2fa/email-code", id: "sendTwoFactorEmailCode", summary: "Mail a code for the second step", auth: "pending",
		desc: "Only with Config.EmailCode.Enabled.", ok: oaMessage("Code sent. Check your email."),
		errs: []*Error{ErrNoPendingTwoFactor, ErrTwoFactorExpired, ErrInvalidSession, ErrEmailCodeNeedsVerifiedEmail, ErrTooManyEmailCodes}},
	{method: "POST", path: "/api/2fa/email-code/verify", id: "verifyTwoFactorEmailCode", summary: "Finish a login with a mailed code", auth: "pending",
		desc: "Only with Config.EmailCode.Enabled.", fields: secondStep, required: []string{"code"}, ok: oaClosed(obj{"success": obj{"const": true}}, "success"),
		errs: cat(pendingStep, []*Error{ErrEmailCodeNeedsVerifiedEmail, ErrInvalidTwoFactorCode, ErrEmailCodeExpired, ErrCodeUsed}), hooks: "AfterLogin",
		cookies: loginCookies + "; authkit_trusted with trustDevice"},
	{method: "POST", path: "/api/2fa/setup", id: "setupTwoFactor", summary: "Start turning 2FA on", auth: "session",
		desc: "Needs a recent authentication (403 reauthentication_required). Feature two-factor.",
		ok:   oaClosed(obj{"qrUri": oaStr("otpauth:// URI holding the secret"), "qrImage": oaStr("the URI as a PNG QR code, a data: URI")}, "qrUri", "qrImage"),
		errs: []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrTwoFactorAlreadyEnabled}},
	{method: "POST", path: "/api/2fa/confirm", id: "confirmTwoFactor", summary: "Turn 2FA on with a code of the pending secret", auth: "session",
		desc: "Needs a recent authentication. Feature two-factor.", fields: obj{"code": oaStr("a current TOTP code (spaces ignored)")}, required: []string{"code"},
		ok:   oaClosed(obj{"message": obj{"type": "string"}, "recoveryCodes": obj{"type": "array", "items": obj{"type": "string"}}}, "message", "recoveryCodes"),
		errs: []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrNoPendingSetup, ErrInvalidCode}},
	{method: "POST", path: "/api/2fa/regenerate-codes", id: "regenerateRecoveryCodes", summary: "Replace the recovery codes", auth: "session",
		desc: "Needs a recent authentication. Feature two-factor.",
		ok:   oaClosed(obj{"recoveryCodes": obj{"type": "array", "items": obj{"type": "string"}}}, "recoveryCodes"),
		errs: []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrTwoFactorNotEnabled}},
	{method: "POST", path: "/api/2fa/disable", id: "disableTwoFactor", summary: "Turn 2FA off", auth: "session",
		fields: obj{"password": oaStr("the current password")}, required: []string{"password"}, ok: oaMessage("2FA disabled"),
		errs:    cat([]*Error{ErrNotAuthenticated, ErrTwoFactorNotEnabled}, currentPassword),
		cookies: "authkit_session (renewed)"},
	{method: "GET", path: "/api/2fa/trusted-devices", id: "listTrustedDevices", summary: "List the account's trusted browsers", auth: "session",
		desc: "Only with Config.TrustedDevices.",
		ok:   oaClosed(obj{"devices": obj{"type": "array", "items": oaRef("TrustedDevice")}}, "devices"),
		errs: []*Error{ErrNotAuthenticated}},
	{method: "DELETE", path: "/api/2fa/trusted-devices/{id}", id: "forgetTrustedDevice", summary: "Stop trusting one browser", auth: "session",
		desc: "Only with Config.TrustedDevices.", param: "the trusted device's id", ok: oaMessage("Trusted device removed"),
		errs:    []*Error{ErrNotAuthenticated, ErrTrustedDeviceNotFound},
		cookies: "authkit_trusted expired when it is this browser's"},
	{method: "POST", path: "/api/auth/register", id: "register", summary: "Create an account",
		desc:   "Feature registration. Extra string fields of Config.RegisterFields are read too.",
		fields: obj{"email": oaStr("at most 254 bytes, trimmed and lowercased"), "password": oaStr("8 to 128 characters"), "name": oaStr("at most 200 characters; required unless Config.NameOptional")}, required: []string{"email", "password"},
		ok:      oaMessage("Registration successful. Check your email to verify your address."),
		errs:    cat(typedEmail, []*Error{ErrNameRequired, ErrNameTooLong}, newPassword, []*Error{ErrEmailRegistered, ErrPasswordBreached, ErrTooManyRegistrations}),
		hooks:   "BeforeRegister, AfterRegister",
		cookies: sessionCookies},
	{method: "GET", path: "/api/auth/verify-email/{token}", id: "verifyEmail", summary: "Verify an email address with a mailed token",
		param: "the token of the mailed link", ok: oaMessage("Email verified, or Email already verified"),
		errs: []*Error{ErrVerifyLinkInvalid, ErrVerifyLinkUserMissing, ErrVerifyLinkStale}},
	{method: "POST", path: "/api/auth/resend-verification", id: "resendVerification", summary: "Mail the verification link again", auth: "session",
		ok:   oaMessage("Verification email sent, or Email already verified"),
		errs: []*Error{ErrNotAuthenticated, ErrTooManyResends}},
	{method: "POST", path: "/api/auth/change-email", id: "changeEmail", summary: "Change the account's email", auth: "session",
		desc:   "Feature email-change.",
		fields: obj{"newEmail": oaStr("the new address"), "password": oaStr("the current password")}, required: []string{"newEmail", "password"},
		ok:      oaMessage("Email updated. Check your new address to verify it."),
		errs:    cat([]*Error{ErrNotAuthenticated, ErrNewEmailRequired}, typedEmail, currentPassword, []*Error{ErrEmailInUse, ErrEmailChangedMeanwhile}),
		cookies: "authkit_session (renewed)"},
	{method: "POST", path: "/api/auth/forgot-password", id: "forgotPassword", summary: "Mail a password reset link",
		desc:   "Feature password-reset. The answer is the same whether or not the address has an account.",
		fields: obj{"email": oaStr("the account's email")}, required: []string{"email"}, ok: oaMessage("If an account exists for that email, a password reset link has been sent."),
		errs: cat(typedEmail, []*Error{ErrTooManyResets})},
	{method: "POST", path: "/api/auth/reset-password/{token}", id: "resetPassword", summary: "Set a new password with a mailed token",
		desc: "Feature password-reset.", param: "the token of the mailed link",
		fields: obj{"password": oaStr("the new password, 8 to 128 characters"), "confirmPassword": oaStr("must equal password")}, required: []string{"password", "confirmPassword"},
		ok:   oaMessage("Password has been reset. You can now log in."),
		errs: cat([]*Error{ErrPasswordsDiffer}, newPassword, []*Error{ErrResetLinkInvalid, ErrResetLinkUsed, ErrPasswordBreached})},
	{method: "POST", path: "/api/auth/logout", id: "logout", summary: "Log out",
		desc: "Always 200, with or without a session.", ok: oaMessage("Logged out"), cookies: "authkit_session and 2fa_pending expired",
		storeless: true},
	{method: "POST", path: "/api/auth/logout-all", id: "logoutAll", summary: "End every session of the account", auth: "session",
		ok: oaMessage("Logged out of all sessions"), errs: []*Error{ErrNotAuthenticated}, cookies: "authkit_session and 2fa_pending expired"},
	{method: "GET", path: "/api/auth/me", id: "currentUser", summary: "The signed-in user", auth: "session",
		ok: oaRef("User"), errs: []*Error{ErrNotAuthenticated}},
	{method: "POST", path: "/api/auth/change-password", id: "changePassword", summary: "Change the password", auth: "session",
		desc:   "Feature password-change.",
		fields: obj{"currentPassword": oaStr("the current password"), "newPassword": oaStr("8 to 128 characters")}, required: []string{"currentPassword", "newPassword"},
		ok:      oaMessage("Password changed"),
		errs:    cat([]*Error{ErrNotAuthenticated}, newPassword, currentPassword, []*Error{ErrPasswordBreached, ErrPasswordChangedMeanwhile}),
		cookies: "authkit_session (renewed)"},
	{method: "POST", path: "/api/auth/confirm-password", id: "confirmPassword", summary: "Re-enter the password (a recent session for 15 minutes)", auth: "session",
		fields: obj{"password": oaStr("the current password")}, required: []string{"password"}, ok: oaMessage("Password confirmed"),
		errs:    cat([]*Error{ErrNotAuthenticated}, currentPassword),
		cookies: "authkit_session (reissued, authenticated now)"},
	{method: "GET", path: "/api/auth/sessions", id: "listSessions", summary: "List the account's sessions", auth: "session",
		desc: "Only with Config.Sessions.",
		ok:   oaClosed(obj{"sessions": obj{"type": "array", "items": oaRef("Session")}}, "sessions"),
		errs: []*Error{ErrNotAuthenticated}},
	{method: "DELETE", path: "/api/auth/sessions/{id}", id: "endSession", summary: "End one session", auth: "session",
		desc: "Only with Config.Sessions. Ending another session needs a recent authentication.", param: "the session's id",
		ok: oaMessage("Session ended"), errs: []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrSessionNotFound},
		cookies: "authkit_session and 2fa_pending expired when it is this session"},
}

// openAPIDocument builds the document from apiOps.
func openAPIDocument(t *testing.T) []byte {
	t.Helper()
	// Every route has a row and every row a route.
	var inRoutes, inOps []string
	for _, rt := range routes {
		inRoutes = append(inRoutes, rt.Method+" "+rt.Pattern)
	}
	for _, op := range apiOps {
		inOps = append(inOps, op.method+" "+op.path)
	}
	slices.Sort(inRoutes)
	slices.Sort(inOps)
	if !slices.Equal(inRoutes, inOps) {
		t.Fatalf("apiOps and routes differ:\nroutes %q\napiOps %q", inRoutes, inOps)
	}

	paths, comps := obj{}, components()
	shared := comps["responses"].(obj)
	for _, op := range apiOps {
		item, _ := paths[op.path].(obj)
		if item == nil {
			item = obj{}
			paths[op.path] = item
		}
		item[strings.ToLower(op.method)] = op.operation(shared)
	}
	doc := openAPIDoc{
		OpenAPI: "3.1.0",
		Info: obj{
			"title":       "authkit",
			"version":     "0.1.0",
			"description": "The JSON routes of authkit's core/auth. docs/api.md is the prose; auth.Service.OpenAPI serves this document with only the routes a Service registers.",
			"license":     obj{"name": "MIT", "identifier": "MIT"},
		},
		Paths:      paths,
		Components: comps,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// operation is op's operation object. An error response of a few codes
// is shared by every operation with it: it goes to shared (the document's
// components/responses) as "STATUS-code-code".
func (op apiOp) operation(shared obj) obj {
	o := obj{"operationId": op.id, "summary": op.summary}
	if op.desc != "" {
		o["description"] = op.desc
	}
	var params []obj
	if op.param != "" {
		name := op.path[strings.IndexByte(op.path, '{')+1 : strings.IndexByte(op.path, '}')]
		params = append(params, obj{"name": name, "in": "path", "required": true, "description": op.param, "schema": obj{"type": "string"}})
	}
	// Every answer's texts follow it: an error's on every route.
	o["parameters"] = append(params, ref("parameters", "Accept-Language"))
	switch op.auth {
	case "session":
		o["security"] = []obj{{"session": []string{}}}
	case "pending":
		o["security"] = []obj{{"pending": []string{}}}
	}
	if op.method == http.MethodPost && op.fields == nil {
		o["description"] = strings.TrimSpace(op.desc + " No body: any body is ignored.")
	}
	if op.method == http.MethodPost && op.fields != nil {
		props := op.fields
		body := obj{"type": "object", "properties": props}
		if len(op.required) > 0 {
			body["required"] = op.required
		}
		desc := "JSON, or the same fields as a form post. Unknown fields are ignored; absent fields are empty."
		// A form carries booleans as words (docs/api.md, Request bodies).
		formProps := obj{}
		for k, v := range props {
			if v.(obj)["type"] == "boolean" {
				v = obj{"type": "string", "enum": []string{"true", "on", "1", "yes", "false", "off", "0", "no", ""}, "description": v.(obj)["description"]}
			}
			formProps[k] = v
		}
		form := obj{"type": "object", "properties": formProps}
		if len(op.required) > 0 {
			form["required"] = op.required
		}
		o["requestBody"] = obj{
			"required":    false,
			"description": desc + " A body without Content-Type is read as JSON; any other type answers 415.",
			"content": obj{
				"application/json":                  obj{"schema": body},
				"application/x-www-form-urlencoded": obj{"schema": form},
			},
		}
	}
	limited := slices.ContainsFunc(op.errs, func(e *Error) bool { return e.Status == http.StatusTooManyRequests })
	headers := answerHeaders(limited)
	if op.cookies != "" {
		headers["Set-Cookie"] = obj{"description": "Cookies: " + op.cookies + ".", "schema": obj{"type": "string"}}
	}
	responses := obj{"200": obj{
		"description": "Success.",
		"headers":     headers,
		"content":     obj{"application/json": obj{"schema": op.ok}},
	}}
	byStatus := map[int][]*Error{}
	for _, e := range op.conditions() {
		byStatus[e.Status] = append(byStatus[e.Status], e)
	}
	for st, errs := range byStatus {
		hooks := ""
		if st == http.StatusBadRequest || st == http.StatusForbidden {
			hooks = op.hooks
		}
		resp := errorResponse(st, errs, hooks)
		if len(errs) <= 3 && hooks == "" {
			name := itoa(st)
			for _, e := range errs {
				name += "-" + string(e.Code)
			}
			shared[name] = resp
			resp = ref("responses", name)
		}
		responses[itoa(st)] = resp
	}
	o["responses"] = responses
	// The cookies any answer of the operation may set or expire, for
	// clients and for the drift test: those its success sets, and the
	// session cookie of a session route (a dead one is expired).
	var set []string
	for _, name := range []string{session.DefaultCookieName, DeviceCookie, PendingCookie, TrustedDeviceCookie} {
		if strings.Contains(op.cookies, name) || (name == session.DefaultCookieName && op.auth == "session") {
			set = append(set, name)
		}
	}
	if set == nil {
		set = []string{}
	}
	o["x-set-cookies"] = set
	return o
}

// The conditions of a body read by decode (input.go): every route with
// fields.
var bodyConditions = []*Error{ErrUnreadableBody, ErrInvalidCharacters, ErrInvalidJSON, ErrInvalidForm,
	ErrDuplicateField, ErrWrongFieldType, ErrBodyTooLarge, ErrUnsupportedContentType}

// headerTooLarge is what Service.Error answers for fiber's 431 (a request
// line or headers over ReadBufferSize): request_rejected with its status.
var headerTooLarge = &Error{Status: http.StatusRequestHeaderFieldsTooLarge, Code: ErrRequestRejected.Code,
	Message: http.StatusText(http.StatusRequestHeaderFieldsTooLarge)}

// conditions is every condition op answers with: its flow's (errs) and
// those of its shape, by status and then in the order of Codes, once each.
func (op apiOp) conditions() []*Error {
	all := slices.Clone(op.errs)
	if op.method != http.MethodGet {
		// Handle's cross-origin check of every state-changing route;
		// fiber's BodyLimit refuses a longer body before any route runs.
		all = append(all, ErrCrossOrigin, ErrBodyTooLarge)
	}
	if op.fields != nil {
		all = append(all, bodyConditions...)
	}
	if op.param != "" {
		// A token or id the framework does not route to the operation
		// (an encoded slash) answers 404 not_found; one longer than the
		// framework's request-line buffer (fiber) 431 request_rejected.
		all = append(all, ErrNotFound, headerTooLarge)
	}
	all = append(all, ErrInternal) // a panic in a flow, a store's unexpected error
	if !op.storeless {
		all = append(all, ErrUnavailable)
	}
	order := map[Code]int{}
	for i, e := range codes {
		order[e.Code] = i
	}
	slices.SortStableFunc(all, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Status, b.Status), cmp.Compare(order[a.Code], order[b.Code]))
	})
	return slices.CompactFunc(all, func(a, b *Error) bool { return a.Status == b.Status && a.Code == b.Code })
}

// ref is a reference to a component.
func ref(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

// answerHeaders are the headers of every answer: limited adds the
// X-RateLimit-* pair of a route that counts against a limit.
func answerHeaders(limited bool) obj {
	h := obj{
		"Cache-Control":          ref("headers", "Cache-Control"),
		"X-Content-Type-Options": ref("headers", "X-Content-Type-Options"),
		"Content-Language":       ref("headers", "Content-Language"),
		"Vary":                   ref("headers", "Vary"),
	}
	if limited {
		h["X-RateLimit-Remaining"] = ref("headers", "X-RateLimit-Remaining")
		h["X-RateLimit-Reset"] = ref("headers", "X-RateLimit-Reset")
	}
	return h
}

// exampleRetryAfter is the retryAfter of the examples of a 429.
const exampleRetryAfter = "2031-03-14T15:24:26.535Z"

// errorResponse is the response of status st: the {error, code} body with
// code one of errs, each an example with its English text. hooks, when
// not empty, names the hooks whose own codes the status may carry too.
func errorResponse(st int, errs []*Error, hooks string) obj {
	enum := []string{}
	examples := obj{}
	for _, e := range errs {
		enum = append(enum, string(e.Code))
		body := obj{"error": e.Message, "code": e.Code}
		if st == http.StatusTooManyRequests {
			body["retryAfter"] = exampleRetryAfter
		}
		examples[string(e.Code)] = obj{"summary": e.Message, "value": body}
	}
	code := obj{"type": "string", "enum": enum, "description": "the condition (docs/errors.md): one of these"}
	if hooks != "" {
		code = obj{"anyOf": []obj{
			{"type": "string", "enum": enum, "description": "authkit's conditions (docs/errors.md)"},
			{"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "description": appCodes(hooks)},
		}}
	}
	return obj{
		"description": http.StatusText(st) + ": {error, code}; the examples are authkit's conditions, in English.",
		"headers":     errorHeaders(st),
		"content": obj{"application/json": obj{
			"schema":   errorSchema(st, code),
			"examples": examples,
		}},
	}
}

// anyApp is the hooks of the generic responses: any of an app's.
const anyApp = "*"

// appCodes describes the app's own codes of hooks.
func appCodes(hooks string) string {
	if hooks == anyApp {
		return "an app's own code: its hooks', its own routes'"
	}
	return "an app's own code, from Hooks." + strings.ReplaceAll(hooks, ", ", " or Hooks.")
}

// errorSchema is the body of an error of status st with code's schema.
func errorSchema(st int, code obj) obj {
	props := obj{
		"error": obj{"type": "string", "description": "the text: the spec's or authkit's English (a text naming a field or a bound names it), or its translation with Config.Catalog"},
		"code":  code,
	}
	required := []string{"error", "code"}
	if st == http.StatusTooManyRequests {
		props["retryAfter"] = obj{"type": "string", "description": "the window's end, ISO 8601 UTC", "pattern": isoPattern}
		required = append(required, "retryAfter")
	}
	return oaClosed(props, required...)
}

const isoPattern = `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`

// errorHeaders are the headers of an error of status st: a 429 and a 503
// require Retry-After, a 429 the X-RateLimit-* pair, which the other
// errors of a route that counted an attempt carry too.
func errorHeaders(st int) obj {
	h := answerHeaders(true)
	retry := obj{"description": "Seconds until the client may try again (429: the window's end, at least 1; 503: 5).", "required": true, "schema": obj{"type": "string", "pattern": "^[1-9][0-9]*$"}}
	switch st {
	case http.StatusTooManyRequests:
		h["Retry-After"] = retry
		h["X-RateLimit-Remaining"] = obj{"description": "0: no attempt left.", "required": true, "schema": obj{"type": "string", "const": "0"}}
		h["X-RateLimit-Reset"] = obj{"description": "The window's end, ISO 8601 UTC with milliseconds.", "required": true, "schema": obj{"type": "string", "pattern": isoPattern}}
	case http.StatusServiceUnavailable:
		h["Retry-After"] = retry
	case http.StatusMethodNotAllowed:
		h["Allow"] = obj{"description": "The methods of the path.", "required": true, "schema": obj{"type": "string"}}
	}
	return h
}

func components() obj {
	hdr := func(desc string, schema obj, required bool) obj {
		return obj{"description": desc, "schema": schema, "required": required}
	}
	c := obj{
		"securitySchemes": obj{
			"session": obj{"type": "apiKey", "in": "cookie", "name": "authkit_session",
				"description": "The session cookie (name: Config.SessionCookie). Without a valid one: 401 not_authenticated."},
			"pending": obj{"type": "apiKey", "in": "cookie", "name": PendingCookie,
				"description": "The cookie of a login waiting for its second factor (5 minutes). Without it: 401 no_pending_two_factor."},
		},
		"headers": obj{
			"Cache-Control":          hdr("Every answer: no-store.", obj{"type": "string", "const": "no-store"}, true),
			"X-Content-Type-Options": hdr("Every answer: nosniff.", obj{"type": "string", "const": "nosniff"}, true),
			"X-RateLimit-Remaining":  hdr("Attempts left in the window, on every answer of a route that counted one.", obj{"type": "string", "pattern": "^[0-9]+$"}, false),
			"X-RateLimit-Reset":      hdr("The window's end, ISO 8601 UTC with milliseconds.", obj{"type": "string", "pattern": isoPattern}, false),
			"Content-Language": hdr("With Config.Catalog, when the request's Accept-Language chose one of its languages: that language (a BCP 47 tag) of the answer's texts. Absent for English.",
				obj{"type": "string", "pattern": "^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$"}, false),
			"Vary": hdr("With Config.Catalog: Accept-Language, as the answer's texts depend on it.", obj{"type": "string", "pattern": "Accept-Language"}, false),
		},
		"parameters": obj{
			"Accept-Language": obj{"name": "Accept-Language", "in": "header", "required": false, "schema": obj{"type": "string"},
				"description": "With Config.Catalog: the languages the client prefers (RFC 9110); the texts of the answer (error, message) and of the mails it sends are in the best of the catalog's, English otherwise."},
		},
		"schemas": obj{
			"Message": oaClosed(obj{"message": obj{"type": "string"}}, "message"),
			"User": oaClosed(obj{
				"id": obj{"type": "string"}, "email": obj{"type": "string"}, "name": obj{"type": "string"},
				"emailVerified": obj{"type": "boolean"}, "emailVerifiedAt": obj{"type": []string{"string", "null"}, "format": "date-time"},
				"twoFactorEnabled": obj{"type": "boolean"}, "recoveryCodesRemaining": obj{"type": "integer", "minimum": 0},
				"createdAt": obj{"type": "string", "format": "date-time", "description": "left out when the store does not keep it"},
			}, "id", "email", "name", "emailVerified", "emailVerifiedAt", "twoFactorEnabled", "recoveryCodesRemaining"),
			"Session": oaClosed(obj{
				"id": obj{"type": "string"}, "current": obj{"type": "boolean"}, "createdAt": obj{"type": "string", "format": "date-time"},
				"lastSeenAt": obj{"type": "string", "format": "date-time"}, "ip": obj{"type": "string"}, "userAgent": obj{"type": "string"},
			}, "id", "current", "createdAt", "lastSeenAt", "ip", "userAgent"),
			"TrustedDevice": oaClosed(obj{
				"id": obj{"type": "string"}, "current": obj{"type": "boolean"}, "createdAt": obj{"type": "string", "format": "date-time"},
				"lastUsedAt": obj{"type": "string", "format": "date-time"}, "expiresAt": obj{"type": "string", "format": "date-time"},
				"ip": obj{"type": "string"}, "userAgent": obj{"type": "string"},
			}, "id", "current", "createdAt", "lastUsedAt", "expiresAt", "ip", "userAgent"),
		},
	}
	// One generic error response per status, every authkit code of the
	// status, for the parts an app adds (Service.OpenAPI); each operation
	// lists its own.
	byStatus := map[int][]*Error{}
	for _, e := range codes {
		byStatus[e.Status] = append(byStatus[e.Status], e)
	}
	byStatus[headerTooLarge.Status] = []*Error{headerTooLarge}
	responses := obj{}
	for st, errs := range byStatus {
		responses[fmt.Sprintf("Error%d", st)] = errorResponse(st, errs, anyApp)
	}
	c["responses"] = responses
	return c
}

func TestOpenAPIDocumentUpToDate(t *testing.T) {
	want := openAPIDocument(t)
	if *updateOpenAPI {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return // the embedded copy is the one before the rewrite
	}
	if !bytes.Equal(openAPIJSON, want) {
		t.Fatal("openapi.json is not what openapi_gen_test.go writes: run go test ./auth -run TestOpenAPIDocumentUpToDate -update")
	}
}

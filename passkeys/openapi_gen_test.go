package passkeys

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// openapi.json is written from the table below, so that each route's
// error codes are the auth.Error values its code returns: go test . -run
// TestOpenAPIPartUpToDate -update. Its references name core's components
// (headers, the Accept-Language parameter, the security schemes), so it is
// a part of core's document; the e2e module's openapi package checks every
// answer of the passkey flow suite against the merged document on all
// three frameworks.

var updateOpenAPI = flag.Bool("update", false, "rewrite openapi.json from openapi_gen_test.go")

type obj = map[string]any

// pkOp is one route of the part.
type pkOp struct {
	method, path, id, summary, desc string
	auth                            string // "", "session", "pending"
	body                            obj    // the JSON body's schema; nil: no body is read
	bodyDesc                        string
	ok                              obj    // the 200 body's schema
	cookies                         string // the Set-Cookie of a 200
	setCookies                      []string

	// errs are the conditions of the route's own code (routes.go and
	// passkeys.go, and the auth.Service methods they call); conditions
	// adds those of its shape. A 429 among them makes the route a limited
	// one (X-RateLimit-* on its answers).
	errs []*auth.Error
	// hooks names the auth.Hooks whose own *Error the route answers with.
	hooks string
}

// The conditions of a begun 2FA login (auth.Service.PendingTwoFactorUser).
var pendingLogin = []*auth.Error{auth.ErrNoPendingTwoFactor, auth.ErrTwoFactorExpired, auth.ErrInvalidSession}

// Those of the 2FA finish (auth.Service.FinishTwoFactor): not
// ErrNoPendingTwoFactor, as its ceremony is bound to the pending cookie it
// was begun under (pendingHash), so a request without one fails first
// with ErrPasskeyChallengeInvalid.
var finishPendingLogin = []*auth.Error{auth.ErrTwoFactorExpired, auth.ErrInvalidSession}

var (
	beganCookie = "authkit_passkey (the begun ceremony, 5 minutes, Path=/api/passkeys, SameSite=Strict)"
	credential  = "JSON: the credential as PublicKeyCredential.toJSON() gives it (id, rawId, type, response, ...)"
	success     = closed(obj{"success": obj{"const": true}}, "success")
)

var pkOps = []pkOp{
	{method: "POST", path: Prefix + "/register/begin", id: "beginPasskeyRegistration", summary: "Begin adding a passkey", auth: "session",
		desc: "Needs a recent authentication. Counts against BeginLimit.",
		ok:   schemaRef("PasskeyOptions"), cookies: beganCookie, setCookies: []string{"authkit_session", ChallengeCookie},
		errs: []*auth.Error{auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrTooManyRequests}},
	{method: "POST", path: Prefix + "/register/finish", id: "finishPasskeyRegistration", summary: "Finish adding a passkey", auth: "session",
		desc:     "The same session, still recent.",
		body:     obj{"type": "object", "properties": obj{"name": obj{"type": "string", "description": "trimmed, at most 64 characters; default Passkey"}}},
		bodyDesc: credential + ", plus name.",
		ok:       schemaRef("Passkey"), cookies: "authkit_passkey expired", setCookies: []string{"authkit_session", ChallengeCookie},
		errs: []*auth.Error{auth.ErrPasskeyChallengeInvalid, auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrNameTooLong, auth.ErrInvalidCharacters,
			auth.ErrPasskeyInvalid, auth.ErrPasskeyAlreadyRegistered}},
	{method: "POST", path: Prefix + "/2fa/begin", id: "beginPasskeyTwoFactor", summary: "Begin the second step with a passkey", auth: "pending",
		desc: "A valid 2fa_pending cookie. 404 passkey_not_found when the user has none. Counts against BeginLimit.",
		ok:   schemaRef("PasskeyOptions"), cookies: beganCookie, setCookies: []string{ChallengeCookie},
		errs: slices.Concat(pendingLogin, []*auth.Error{auth.ErrPasskeyNotFound, auth.ErrTooManyRequests})},
	{method: "POST", path: Prefix + "/2fa/finish", id: "finishPasskeyTwoFactor", summary: "Finish the second step with a passkey", auth: "pending",
		desc: "As POST /api/2fa/verify: the session, the pending cookie deleted; on failure the pending cookie stays.",
		body: obj{"type": "object", "properties": obj{
			"remember":    obj{"type": "boolean", "description": "when sent, overrides the remember flag given at login"},
			"trustDevice": obj{"type": "boolean", "description": "true trusts this browser (with auth.Config.TrustedDevices): the authkit_trusted cookie"},
		}},
		bodyDesc: credential + " (the assertion), plus remember and trustDevice.",
		ok:       success, cookies: "authkit_session, authkit_device; 2fa_pending deleted; authkit_passkey expired; authkit_trusted with trustDevice",
		setCookies: []string{"authkit_session", "authkit_device", "2fa_pending", ChallengeCookie, "authkit_trusted"},
		errs: slices.Concat(finishPendingLogin, []*auth.Error{auth.ErrTooManyTwoFactor, auth.ErrPasskeyChallengeInvalid, auth.ErrPasskeyInvalid,
			auth.ErrPasskeyCountRegressed}), hooks: "AfterLogin"},
	{method: "POST", path: Prefix + "/login/begin", id: "beginPasskeyLogin", summary: "Begin a passwordless login",
		desc: "Discoverable credentials, no allow list; for conditional UI too. Counts against BeginLimit. 404 feature_disabled when Config.AllowPasswordless is false.",
		ok:   schemaRef("PasskeyOptions"), cookies: beganCookie, setCookies: []string{ChallengeCookie},
		errs: []*auth.Error{auth.ErrFeatureDisabled, auth.ErrTooManyRequests}},
	{method: "POST", path: Prefix + "/login/finish", id: "finishPasskeyLogin", summary: "Finish a passwordless login",
		desc:     "The browser that began it. Counts against the login limit of the client's address. 404 feature_disabled when Config.AllowPasswordless is false.",
		body:     obj{"type": "object", "properties": obj{"remember": obj{"type": "boolean", "description": "a 30-day session instead of 24 hours"}}},
		bodyDesc: credential + " (the assertion), plus remember.",
		ok:       success, cookies: "authkit_session, authkit_device; 2fa_pending deleted; authkit_passkey expired",
		setCookies: []string{"authkit_session", "authkit_device", "2fa_pending", ChallengeCookie},
		errs: []*auth.Error{auth.ErrFeatureDisabled, auth.ErrPasskeyChallengeInvalid, auth.ErrTooManyLogins, auth.ErrPasskeyInvalid,
			auth.ErrPasskeyCountRegressed, auth.ErrInvalidCredentials}, hooks: "AfterLogin"},
	{method: "GET", path: Prefix, id: "listPasskeys", summary: "The user's passkeys, oldest first", auth: "session",
		ok:         closed(obj{"passkeys": obj{"type": "array", "items": schemaRef("Passkey")}}, "passkeys"),
		setCookies: []string{"authkit_session"},
		errs:       []*auth.Error{auth.ErrNotAuthenticated}},
	{method: "POST", path: Prefix + "/rename", id: "renamePasskey", summary: "Rename a passkey", auth: "session",
		body: obj{"type": "object", "properties": obj{"id": obj{"type": "string", "description": "the credential id, base64url"}, "name": obj{"type": "string"}}},
		ok:   schemaRef("Passkey"), setCookies: []string{"authkit_session"},
		errs: []*auth.Error{auth.ErrNotAuthenticated, auth.ErrPasskeyNotFound, auth.ErrNameRequired, auth.ErrInvalidCharacters, auth.ErrNameTooLong}},
	{method: "POST", path: Prefix + "/delete", id: "deletePasskey", summary: "Delete a passkey", auth: "session",
		desc: "Needs a recent authentication.",
		body: obj{"type": "object", "properties": obj{"id": obj{"type": "string", "description": "the credential id, base64url"}}},
		ok:   success, setCookies: []string{"authkit_session"},
		errs: []*auth.Error{auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrPasskeyNotFound}},
}

// The conditions of a body read by readJSON (routes.go).
var bodyConditions = []*auth.Error{auth.ErrUnsupportedContentType, auth.ErrUnreadableBody, auth.ErrBodyTooLarge, auth.ErrInvalidJSON}

// conditions is every condition op answers with: its code's (errs) and
// those of its shape, by status and then in the order of auth.Codes.
func (op pkOp) conditions() []*auth.Error {
	all := slices.Clone(op.errs)
	if op.method != http.MethodGet {
		// serve's cross-origin check; fiber's BodyLimit before any route.
		all = append(all, auth.ErrCrossOrigin, auth.ErrBodyTooLarge)
	}
	if op.body != nil {
		all = append(all, bodyConditions...)
	}
	// A panic or an unexpected error; a store or the challenge store down.
	all = append(all, auth.ErrInternal, auth.ErrUnavailable)
	order := map[auth.Code]int{}
	for i, e := range auth.Codes() {
		order[e.Code] = i
	}
	slices.SortStableFunc(all, func(a, b *auth.Error) int {
		return cmp.Or(cmp.Compare(a.Status, b.Status), cmp.Compare(order[a.Code], order[b.Code]))
	})
	return slices.CompactFunc(all, func(a, b *auth.Error) bool { return a.Status == b.Status && a.Code == b.Code })
}

func schemaRef(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// coreRef names one of core's components.
func coreRef(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

func closed(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// headers are core's headers of every answer; limited adds the
// X-RateLimit-* pair.
func headers(limited bool) obj {
	h := obj{
		"Cache-Control":          coreRef("headers", "Cache-Control"),
		"X-Content-Type-Options": coreRef("headers", "X-Content-Type-Options"),
		"Content-Language":       coreRef("headers", "Content-Language"),
		"Vary":                   coreRef("headers", "Vary"),
	}
	if limited {
		h["X-RateLimit-Remaining"] = coreRef("headers", "X-RateLimit-Remaining")
		h["X-RateLimit-Reset"] = coreRef("headers", "X-RateLimit-Reset")
	}
	return h
}

const isoPattern = `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`

// errorResponse is the answer of status st with one of errs, as core's
// document writes it: code an enum (beside an app's own codes where hooks
// run), each condition an example with its English text.
func errorResponse(st int, errs []*auth.Error, hooks string) obj {
	enum := []string{}
	examples := obj{}
	for _, e := range errs {
		enum = append(enum, string(e.Code))
		body := obj{"error": e.Message, "code": e.Code}
		if st == http.StatusTooManyRequests {
			body["retryAfter"] = "2031-03-14T15:24:26.535Z"
		}
		examples[string(e.Code)] = obj{"summary": e.Message, "value": body}
	}
	code := obj{"type": "string", "enum": enum, "description": "the condition (docs/errors.md): one of these"}
	if hooks != "" {
		code = obj{"anyOf": []obj{
			{"type": "string", "enum": enum, "description": "authkit's conditions (docs/errors.md)"},
			{"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "description": "an app's own code, from Hooks." + hooks},
		}}
	}
	props := obj{
		"error": obj{"type": "string", "description": "the text: authkit's English (a text naming a field or a bound names it), or its translation with Config.Catalog"},
		"code":  code,
	}
	required := []string{"error", "code"}
	h := headers(true)
	retry := obj{"description": "Seconds until the client may try again (429: the window's end, at least 1; 503: 5).", "required": true, "schema": obj{"type": "string", "pattern": "^[1-9][0-9]*$"}}
	switch st {
	case http.StatusTooManyRequests:
		props["retryAfter"] = obj{"type": "string", "description": "the window's end, ISO 8601 UTC", "pattern": isoPattern}
		required = append(required, "retryAfter")
		h["Retry-After"] = retry
		h["X-RateLimit-Remaining"] = obj{"description": "0: no attempt left.", "required": true, "schema": obj{"type": "string", "const": "0"}}
		h["X-RateLimit-Reset"] = obj{"description": "The window's end, ISO 8601 UTC with milliseconds.", "required": true, "schema": obj{"type": "string", "pattern": isoPattern}}
	case http.StatusServiceUnavailable:
		h["Retry-After"] = retry
	}
	return obj{
		"description": http.StatusText(st) + ": {error, code}; the examples are authkit's conditions, in English.",
		"headers":     h,
		"content":     obj{"application/json": obj{"schema": closed(props, required...), "examples": examples}},
	}
}

// operation is op's operation object; an error response of a few codes
// goes to shared (the part's components/responses) as
// "passkeys-STATUS-code-code", for every operation that has it.
func (op pkOp) operation(shared obj) obj {
	o := obj{"operationId": op.id, "summary": op.summary, "x-set-cookies": op.setCookies,
		"parameters": []obj{coreRef("parameters", "Accept-Language")}}
	desc := op.desc
	if op.body == nil && op.method == http.MethodPost {
		desc = strings.TrimSpace(desc + " No body: any body is ignored.")
	}
	if desc != "" {
		o["description"] = desc
	}
	if op.auth != "" {
		o["security"] = []obj{{op.auth: []string{}}}
	}
	if op.body != nil {
		o["requestBody"] = obj{"required": false, "description": cmp.Or(op.bodyDesc, "JSON."),
			"content": obj{"application/json": obj{"schema": op.body}}}
	}
	limited := slices.ContainsFunc(op.errs, func(e *auth.Error) bool { return e.Status == http.StatusTooManyRequests })
	h := headers(limited)
	if op.cookies != "" {
		h["Set-Cookie"] = obj{"description": "Cookies: " + op.cookies + ".", "schema": obj{"type": "string"}}
	}
	responses := obj{"200": obj{"description": "Success.", "headers": h, "content": obj{"application/json": obj{"schema": op.ok}}}}
	byStatus := map[int][]*auth.Error{}
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
			name := "passkeys-" + strconv.Itoa(st)
			for _, e := range errs {
				name += "-" + string(e.Code)
			}
			shared[name] = resp
			resp = coreRef("responses", name)
		}
		responses[strconv.Itoa(st)] = resp
	}
	o["responses"] = responses
	return o
}

// openAPIPartDocument builds the part from pkOps.
func openAPIPartDocument(t *testing.T) []byte {
	t.Helper()
	paths, shared := obj{}, obj{}
	for _, op := range pkOps {
		item, _ := paths[op.path].(obj)
		if item == nil {
			item = obj{}
			paths[op.path] = item
		}
		item[strings.ToLower(op.method)] = op.operation(shared)
	}
	doc := struct {
		OpenAPI    string `json:"openapi"`
		Info       obj    `json:"info"`
		Paths      obj    `json:"paths"`
		Components obj    `json:"components"`
	}{
		OpenAPI: "3.1.0",
		Info: obj{"title": "authkit passkeys", "version": "0.1.0",
			"description": "The JSON routes of the passkeys module, a part of core's document (auth.Service.OpenAPI): its responses name core's components. passkeys.Handler.OpenAPI serves both as one document."},
		Paths: paths,
		Components: obj{
			"responses": shared,
			"schemas": obj{
				"PasskeyOptions": closed(obj{"publicKey": obj{"type": "object", "required": []string{"challenge"},
					"description": "the options of navigator.credentials.create or get, as PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON read them (binary members base64url)"}}, "publicKey"),
				"Passkey": closed(obj{
					"id": obj{"type": "string", "description": "the credential id, base64url"}, "name": obj{"type": "string"},
					"createdAt":      obj{"type": "string", "format": "date-time"},
					"lastUsedAt":     obj{"type": []string{"string", "null"}, "format": "date-time", "description": "null until first used"},
					"backupEligible": obj{"type": "boolean"}, "backedUp": obj{"type": "boolean"},
				}, "id", "name", "createdAt", "lastUsedAt", "backupEligible", "backedUp"),
			},
		},
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

func TestOpenAPIPartUpToDate(t *testing.T) {
	want := openAPIPartDocument(t)
	if *updateOpenAPI {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return // the embedded copy is the one before the rewrite
	}
	if !bytes.Equal(openAPIPart, want) {
		t.Fatal("openapi.json is not what openapi_gen_test.go writes: run go test . -run TestOpenAPIPartUpToDate -update")
	}
}

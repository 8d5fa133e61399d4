package auth

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/authkit-go/authkit/core/session"
)

// Operation is what the OpenAPI document says of one route: it sits in
// the route table beside the route's handler (core's in routes.go, a
// module's where it builds its routes with [NewRoute]), and
// [Service.OpenAPI] renders the document from the table at run time.
type Operation struct {
	ID          string // the operationId
	Summary     string
	Description string
	// Auth is the cookie the route needs: "" none, "session" (the
	// session cookie), "pending" (a login waiting for its second step).
	Auth string
	// Param describes the pattern's one path parameter ({token}, {id});
	// empty for a pattern without one.
	Param string
	// Body is the request body the route reads; nil: it reads none (a
	// POST's body is ignored).
	Body *OperationBody
	// OK is the JSON Schema of the 200 answer's body.
	OK map[string]any
	// Status, when set, is the status of the success instead of 200 (201
	// for a route that creates something); its body is OK.
	Status int
	// Redirect, when set, is the status of the route's success instead of
	// 200 (302 or 303, with Location and no body: a RouteFunc answering a
	// [Redirect]); OK is then not used.
	Redirect int
	// Cookies describes the cookies a 200 sets or expires (its Set-Cookie
	// header).
	Cookies string
	// SetCookies names every cookie any answer of the route may set or
	// expire (x-set-cookies); the session cookie as
	// session.DefaultCookieName, which the document renames to the
	// Service's Config.SessionCookie.
	SetCookies []string
	// Errors are the conditions the route's own code answers with. Those
	// of its shape are added to the document: 403 cross_origin and 413 on
	// a state-changing route, Body.Errors, 404 and 431 for a path
	// parameter, 500, and 503 unless Storeless. A 429 among Errors makes
	// the route a limited one (X-RateLimit-* on its answers).
	Errors []*Error
	// Hooks names the Config.Hooks whose own *Error the route's 400 and
	// 403 may carry ("AfterLogin", "BeforeRegister, AfterRegister").
	Hooks string
	// Storeless: the route reads no store and no limit, so it never
	// answers 503.
	Storeless bool
	// CrossSite: the route takes POSTs from other sites (Handle skips
	// its cross-origin check): a provider's form_post callback, which
	// changes nothing itself and answers a redirect. Only for a route
	// whose every effect is bound to something the browser holds (a
	// cookie it checks), never for one acting on a session.
	CrossSite bool
	// Schemas are the named schemas (components/schemas) OK or Body
	// refer to beyond core's (User, Session, TrustedDevice, Message).
	Schemas map[string]any
}

// OperationBody is the request body of an Operation.
type OperationBody struct {
	// Fields are the JSON Schemas of the body's properties; Required
	// names those it must have.
	Fields   map[string]any
	Required []string
	// Form: the body may be a form post (application/x-www-form-urlencoded)
	// as well as JSON; a form carries booleans as words.
	Form        bool
	Description string
	// Errors are the conditions of reading the body (ErrInvalidJSON,
	// ErrBodyTooLarge, ...).
	Errors []*Error
}

type obj = map[string]any

// OpenAPI returns the OpenAPI 3.1 document (JSON) of the routes this
// Service registers (Modules.Routes: core's routes of the features it has
// on and the stores it has, and the routes modules registered), built from
// each route's Operation; a route without one (a module's script) is not
// in it. The session cookie is named as Config.SessionCookie names it.
// Each operation lists in x-set-cookies the cookies its answers may set
// or expire, and for each status the codes the route answers with (an
// enum on code, each code an example with its English text); every
// answer may carry Content-Language and Vary (with Config.Catalog), and
// every operation takes Accept-Language.
func (s *Service) OpenAPI() ([]byte, error) {
	name := s.sessions.CookieName()
	paths, comps := obj{}, components(name)
	if s.cfg.Tokens.Enabled {
		schemes := comps["securitySchemes"].(obj)
		schemes["bearer"] = obj{"type": "http", "scheme": "bearer",
			"description": "Token mode (docs/mobile.md): the access token (akat_...) of the last answer that issued tokens, 15 minutes by default. Without a valid one: 401 not_authenticated."}
		schemes["pendingBearer"] = obj{"type": "http", "scheme": "bearer",
			"description": "Token mode: the pending token (akpt_...) of a login waiting for its second factor (5 minutes)."}
	}
	shared := comps["responses"].(obj)
	schemas := comps["schemas"].(obj)
	for _, rt := range s.table() {
		if rt.doc == nil {
			continue
		}
		item, _ := paths[rt.Pattern].(obj)
		if item == nil {
			item = obj{}
			paths[rt.Pattern] = item
		}
		op := rt.doc.operation(rt, shared, name)
		if s.cfg.Tokens.Enabled {
			withTokenMode(op)
		}
		item[strings.ToLower(rt.Method)] = op
		for n, sc := range rt.doc.Schemas {
			if _, ok := schemas[n]; !ok {
				schemas[n] = sc
			}
		}
	}
	doc := struct {
		OpenAPI    string `json:"openapi"`
		Info       obj    `json:"info"`
		Paths      obj    `json:"paths"`
		Components obj    `json:"components"`
	}{
		OpenAPI: "3.1.0",
		Info: obj{
			"title":       "authkit",
			"version":     "0.1.0",
			"description": "The JSON routes of an authkit Service: core/auth's and those modules registered (the passkeys module's). docs/api.md is the prose; auth.Service.OpenAPI builds this document with only the routes the Service registers.",
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
		return nil, fmt.Errorf("auth: OpenAPI: %w", err)
	}
	return buf.Bytes(), nil
}

// operation is op's operation object for route rt. An error response of
// a few codes is shared by every operation with it: it goes to shared
// (the document's components/responses) as "STATUS-code-code".
func (op *Operation) operation(rt Route, shared obj, cookieName string) obj {
	o := obj{"operationId": op.ID, "summary": op.Summary}
	desc := op.Description
	if rt.Method == http.MethodPost && op.Body == nil {
		desc = strings.TrimSpace(desc + " No body: any body is ignored.")
	}
	if desc != "" {
		o["description"] = desc
	}
	var params []obj
	if op.Param != "" {
		i, j := strings.IndexByte(rt.Pattern, '{'), strings.IndexByte(rt.Pattern, '}')
		params = append(params, obj{"name": rt.Pattern[i+1 : j], "in": "path", "required": true, "description": op.Param, "schema": obj{"type": "string"}})
	}
	// Every answer's texts follow it: an error's on every route.
	o["parameters"] = append(params, ref("parameters", "Accept-Language"))
	if op.Auth != "" {
		o["security"] = []obj{{op.Auth: []string{}}}
	}
	if b := op.Body; b != nil {
		o["requestBody"] = b.requestBody()
	}
	limited := slices.ContainsFunc(op.Errors, func(e *Error) bool { return e.Status == http.StatusTooManyRequests })
	headers := answerHeaders(limited)
	if op.Cookies != "" {
		headers["Set-Cookie"] = obj{"description": "Cookies: " + op.Cookies + ".", "schema": obj{"type": "string"}}
	}
	okStatus := "200"
	if op.Status != 0 {
		okStatus = strconv.Itoa(op.Status)
	}
	responses := obj{okStatus: obj{
		"description": "Success.",
		"headers":     headers,
		"content":     obj{"application/json": obj{"schema": op.OK}},
	}}
	if op.Redirect != 0 {
		headers["Location"] = obj{"description": "Where the browser goes next.", "schema": obj{"type": "string"}}
		responses = obj{strconv.Itoa(op.Redirect): obj{"description": "Redirect.", "headers": headers}}
	}
	byStatus := map[int][]*Error{}
	for _, e := range op.conditions(rt) {
		byStatus[e.Status] = append(byStatus[e.Status], e)
	}
	for st, errs := range byStatus {
		hooks := ""
		if st == http.StatusBadRequest || st == http.StatusForbidden {
			hooks = op.Hooks
		}
		resp := errorResponse(st, errs, hooks)
		if len(errs) <= 3 && hooks == "" {
			name := strconv.Itoa(st)
			for _, e := range errs {
				name += "-" + string(e.Code)
			}
			shared[name] = resp
			resp = ref("responses", name)
		}
		responses[strconv.Itoa(st)] = resp
	}
	o["responses"] = responses
	set := make([]string, 0, len(op.SetCookies))
	for _, c := range op.SetCookies {
		if c == session.DefaultCookieName {
			c = cookieName
		}
		set = append(set, c)
	}
	o["x-set-cookies"] = set
	return o
}

// requestBody is b's requestBody object.
func (b *OperationBody) requestBody() obj {
	body := obj{"type": "object", "properties": b.Fields}
	if len(b.Required) > 0 {
		body["required"] = b.Required
	}
	content := obj{"application/json": obj{"schema": body}}
	if b.Form {
		// A form carries booleans as words (docs/api.md, Request bodies).
		formProps := obj{}
		for k, v := range b.Fields {
			if f, _ := v.(obj); f["type"] == "boolean" {
				v = obj{"type": "string", "enum": []string{"true", "on", "1", "yes", "false", "off", "0", "no", ""}, "description": f["description"]}
			}
			formProps[k] = v
		}
		form := obj{"type": "object", "properties": formProps}
		if len(b.Required) > 0 {
			form["required"] = b.Required
		}
		content["application/x-www-form-urlencoded"] = obj{"schema": form}
	}
	return obj{"required": false, "description": b.Description, "content": content}
}

// Conditions is every condition the route answers with: its Operation's
// Errors and those of its shape, by status and then in the order of
// Codes, once each; nil for a route without an Operation. The document
// lists exactly these.
func (r Route) Conditions() []*Error {
	if r.doc == nil {
		return nil
	}
	return r.doc.conditions(r)
}

func (op *Operation) conditions(rt Route) []*Error {
	all := slices.Clone(op.Errors)
	if rt.Method != http.MethodGet {
		// Handle's cross-origin check of every state-changing route;
		// fiber's BodyLimit refuses a longer body before any route runs.
		if !op.CrossSite {
			all = append(all, ErrCrossOrigin)
		}
		all = append(all, ErrBodyTooLarge)
	}
	if op.Body != nil {
		all = append(all, op.Body.Errors...)
	}
	if op.Param != "" {
		// A token or id the framework does not route to the operation
		// (an encoded slash) answers 404 not_found; one longer than the
		// framework's request-line buffer (fiber) 431 request_rejected.
		all = append(all, ErrNotFound, headerTooLarge)
	}
	all = append(all, ErrInternal) // a panic in a flow, a store's unexpected error
	if !op.Storeless {
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

// headerTooLarge is what Modules.Error answers for fiber's 431 (a request
// line or headers over ReadBufferSize): request_rejected with its status.
var headerTooLarge = &Error{Status: http.StatusRequestHeaderFieldsTooLarge, Code: ErrRequestRejected.Code,
	Message: http.StatusText(http.StatusRequestHeaderFieldsTooLarge)}

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
	return closedObject(props, required...)
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

// components are the document's components, the session cookie named
// cookieName.
func components(cookieName string) obj {
	hdr := func(desc string, schema obj, required bool) obj {
		return obj{"description": desc, "schema": schema, "required": required}
	}
	c := obj{
		"securitySchemes": obj{
			"session": obj{"type": "apiKey", "in": "cookie", "name": cookieName,
				"description": "The session cookie (name: Config.SessionCookie). Without a valid one: 401 not_authenticated."},
			"pending": obj{"type": "apiKey", "in": "cookie", "name": PendingCookie,
				"description": "The cookie of a login waiting for its second factor (5 minutes). Without it: 401 no_pending_two_factor."},
			"apiKey": obj{"type": "http", "scheme": "bearer", "bearerFormat": "authkit_<id>_<secret><checksum>",
				"description": "A personal API key (Config.APIKeys) as Authorization: Bearer. It authenticates the app's own API (RequireUser, RequireScope), never authkit's routes: 401 invalid_api_key for a key that is malformed, unknown, revoked or expired; 403 insufficient_scope for a key without the scope a route requires; 429 too_many_api_key_requests past Limits.APIKey."},
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
			"Message": closedObject(obj{"message": obj{"type": "string"}}, "message"),
			"User": closedObject(obj{
				"id": obj{"type": "string"}, "email": obj{"type": "string"}, "name": obj{"type": "string"},
				"emailVerified": obj{"type": "boolean"}, "emailVerifiedAt": obj{"type": []string{"string", "null"}, "format": "date-time"},
				"twoFactorEnabled": obj{"type": "boolean"}, "recoveryCodesRemaining": obj{"type": "integer", "minimum": 0},
				"createdAt": obj{"type": "string", "format": "date-time", "description": "left out when the store does not keep it"},
			}, "id", "email", "name", "emailVerified", "emailVerifiedAt", "twoFactorEnabled", "recoveryCodesRemaining"),
			"Session": closedObject(obj{
				"id": obj{"type": "string"}, "current": obj{"type": "boolean"}, "createdAt": obj{"type": "string", "format": "date-time"},
				"lastSeenAt": obj{"type": "string", "format": "date-time"}, "ip": obj{"type": "string"}, "userAgent": obj{"type": "string"},
			}, "id", "current", "createdAt", "lastSeenAt", "ip", "userAgent"),
			"APIKey": closedObject(obj{
				"id": obj{"type": "string"}, "name": obj{"type": "string"}, "prefix": obj{"type": "string", "description": "authkit_<id>: how the key starts"},
				"scopes": obj{"type": "array", "items": obj{"type": "string"}}, "createdAt": obj{"type": "string", "format": "date-time"},
				"expiresAt": obj{"type": "string", "format": "date-time"}, "lastUsedAt": obj{"type": []string{"string", "null"}, "format": "date-time"},
			}, "id", "name", "prefix", "scopes", "createdAt", "expiresAt", "lastUsedAt"),
			"TrustedDevice": closedObject(obj{
				"id": obj{"type": "string"}, "current": obj{"type": "boolean"}, "createdAt": obj{"type": "string", "format": "date-time"},
				"lastUsedAt": obj{"type": "string", "format": "date-time"}, "expiresAt": obj{"type": "string", "format": "date-time"},
				"ip": obj{"type": "string"}, "userAgent": obj{"type": "string"},
			}, "id", "current", "createdAt", "lastUsedAt", "expiresAt", "ip", "userAgent"),
		},
	}
	// One generic error response per status, every authkit code of the
	// status, for the routes an app documents itself; each operation
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

// closedObject is the schema of a JSON object with exactly props, of
// which required are required.
func closedObject(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// tokenProps are the fields of a token-mode answer that issued a session.
func tokenProps() obj {
	return obj{
		"accessToken":  oaStr("Authorization: Bearer on later requests (akat_...)"),
		"refreshToken": oaStr("for POST /api/auth/token/refresh only (akrt_...)"),
		"expiresIn":    obj{"type": "integer", "minimum": 1, "description": "seconds the access token verifies"},
		"tokenType":    obj{"const": "Bearer"},
	}
}

// withTokenMode adds token mode to an operation of a Service with
// Config.Tokens: the bearer schemes beside the cookies, and on an answer
// that may (re)issue a session or start a second step, the token fields
// (present only in token mode, so never required).
func withTokenMode(op obj) {
	if sec, ok := op["security"].([]obj); ok {
		for _, req := range sec {
			switch {
			case req["session"] != nil:
				sec = append(sec, obj{"bearer": []string{}})
			case req["pending"] != nil:
				sec = append(sec, obj{"pendingBearer": []string{}})
			}
		}
		op["security"] = sec
	}
	resp, _ := op["responses"].(obj)
	ok, _ := resp["200"].(obj)
	content, _ := ok["content"].(obj)
	js, _ := content["application/json"].(obj)
	schema, _ := js["schema"].(obj)
	if schema["$ref"] == "#/components/schemas/Message" { // a message answer may renew the session: inline it
		desc := schema["description"]
		schema = closedObject(obj{"message": obj{"type": "string"}}, "message")
		if desc != nil {
			schema["description"] = desc
		}
	}
	props, _ := schema["properties"].(obj)
	if props == nil || schema["additionalProperties"] != false {
		return
	}
	extended := obj{}
	for k, v := range props {
		extended[k] = v
	}
	for k, v := range tokenProps() {
		if _, ok := extended[k]; !ok {
			extended[k] = v
		}
	}
	extended["pendingToken"] = oaStr("token mode, when a second step follows: Authorization: Bearer on the second-step routes (akpt_...)")
	copied := obj{}
	for k, v := range schema {
		copied[k] = v
	}
	copied["properties"] = extended
	js["schema"] = copied
}

package passkeys

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// The JSON routes under Prefix: each decodes its body and calls one typed
// method (the ceremonies in passkeys.go, the management methods of
// auth.Service); auth.Modules.Handle runs it and renders what it returns,
// as it runs core's routes.

// maxBody caps the finish bodies: a credential with its attestation is a
// few kilobytes.
const maxBody = 64 << 10

// routes are the handler's routes, for auth.Modules.AddRoutes: the JSON
// routes, each beside what the OpenAPI document says of it, and the
// script.
func (h *Handler) routes() []auth.Route {
	return []auth.Route{
		auth.NewRoute(http.MethodPost, Prefix+"/register/begin", func(ctx context.Context, v *auth.Visit, _ auth.Request) (any, error) {
			return h.BeginRegistration(ctx, v)
		}, auth.Operation{ID: "beginPasskeyRegistration", Summary: "Begin adding a passkey", Auth: "session",
			Description: "Needs a recent authentication and, with the email-verification feature, a verified address. Counts against BeginLimit.",
			OK:          schemaRef("PasskeyOptions"), Cookies: beganCookie, SetCookies: []string{"authkit_session", ChallengeCookie},
			Errors:  []*auth.Error{auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrEmailNotVerified, auth.ErrTooManyRequests},
			Schemas: schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/register/finish", h.registerFinish, auth.Operation{
			ID: "finishPasskeyRegistration", Summary: "Finish adding a passkey", Auth: "session",
			Description: "The same session, still recent.",
			Body:        jsonBody(credential+", plus name.", obj{"name": obj{"type": "string", "description": "trimmed, at most 64 characters; default Passkey"}}),
			OK:          schemaRef("Passkey"), Cookies: "authkit_passkey expired", SetCookies: []string{"authkit_session", ChallengeCookie},
			Errors: []*auth.Error{auth.ErrPasskeyChallengeInvalid, auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrNameTooLong, auth.ErrInvalidCharacters,
				auth.ErrPasskeyInvalid, auth.ErrPasskeyAlreadyRegistered},
			Schemas: schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/2fa/begin", func(ctx context.Context, v *auth.Visit, _ auth.Request) (any, error) {
			return h.BeginTwoFactor(ctx, v)
		}, auth.Operation{ID: "beginPasskeyTwoFactor", Summary: "Begin the second step with a passkey", Auth: "pending",
			Description: "A valid 2fa_pending cookie. 404 passkey_not_found when the user has none. Counts against BeginLimit.",
			OK:          schemaRef("PasskeyOptions"), Cookies: beganCookie, SetCookies: []string{ChallengeCookie},
			// auth.Modules.PendingTwoFactorUser's conditions, the user's
			// passkeys, the begin limit.
			Errors:  []*auth.Error{auth.ErrNoPendingTwoFactor, auth.ErrTwoFactorExpired, auth.ErrInvalidSession, auth.ErrPasskeyNotFound, auth.ErrTooManyRequests},
			Schemas: schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/2fa/finish", h.twoFactorFinish, auth.Operation{
			ID: "finishPasskeyTwoFactor", Summary: "Finish the second step with a passkey", Auth: "pending",
			Description: "As POST /api/2fa/verify: the session, the pending cookie deleted; on failure the pending cookie stays.",
			Body: jsonBody(credential+" (the assertion), plus remember and trustDevice.", obj{
				"remember":    obj{"type": "boolean", "description": "when sent, overrides the remember flag given at login"},
				"trustDevice": obj{"type": "boolean", "description": "true trusts this browser (with auth.Config.TrustedDevices): the authkit_trusted cookie"},
			}),
			OK:         success,
			Cookies:    "authkit_session, authkit_device; 2fa_pending deleted; authkit_passkey expired; authkit_trusted with trustDevice",
			SetCookies: []string{"authkit_session", "authkit_device", "2fa_pending", ChallengeCookie, "authkit_trusted"},
			// auth.Modules.FinishTwoFactor's, but not ErrNoPendingTwoFactor:
			// the ceremony is bound to the pending cookie it was begun
			// under (pendingHash), so a request without one fails first
			// with ErrPasskeyChallengeInvalid.
			Errors: []*auth.Error{auth.ErrTwoFactorExpired, auth.ErrInvalidSession, auth.ErrTooManyTwoFactor, auth.ErrPasskeyChallengeInvalid, auth.ErrPasskeyInvalid,
				auth.ErrPasskeyCountRegressed},
			Hooks: "AfterLogin"}),
		auth.NewRoute(http.MethodPost, Prefix+"/login/begin", func(ctx context.Context, v *auth.Visit, _ auth.Request) (any, error) {
			return h.BeginLogin(ctx, v)
		}, auth.Operation{ID: "beginPasskeyLogin", Summary: "Begin a passwordless login",
			Description: "Discoverable credentials, no allow list; for conditional UI too. Counts against BeginLimit. 404 feature_disabled when Config.AllowPasswordless is false.",
			OK:          schemaRef("PasskeyOptions"), Cookies: beganCookie, SetCookies: []string{ChallengeCookie},
			Errors:  []*auth.Error{auth.ErrFeatureDisabled, auth.ErrTooManyRequests},
			Schemas: schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/login/finish", h.loginFinish, auth.Operation{
			ID: "finishPasskeyLogin", Summary: "Finish a passwordless login",
			Description: "The browser that began it. Counts against the login limit of the client's address. 404 feature_disabled when Config.AllowPasswordless is false.",
			Body:        jsonBody(credential+" (the assertion), plus remember.", obj{"remember": obj{"type": "boolean", "description": "a 30-day session instead of 24 hours"}}),
			OK:          success, Cookies: "authkit_session, authkit_device; 2fa_pending deleted; authkit_passkey expired",
			SetCookies: []string{"authkit_session", "authkit_device", "2fa_pending", ChallengeCookie},
			Errors: []*auth.Error{auth.ErrFeatureDisabled, auth.ErrPasskeyChallengeInvalid, auth.ErrTooManyLogins, auth.ErrPasskeyInvalid,
				auth.ErrPasskeyCountRegressed, auth.ErrInvalidCredentials},
			Hooks: "AfterLogin"}),
		auth.NewRoute(http.MethodPost, Prefix+"/signup/begin", h.signUpBegin, auth.Operation{
			ID: "beginPasskeySignUp", Summary: "Begin signing up with a passkey and no password",
			Description: "Feature registration. The input is checked as register checks it; the address is not looked up, so a taken and a free address get the same answer (the finish tells). Counts against BeginLimit. 404 feature_disabled when registration or Config.AllowPasswordless is off.",
			Body: jsonBody("", obj{
				"email": obj{"type": "string", "description": "at most 254 bytes, trimmed and lowercased"},
				"name":  obj{"type": "string", "description": "at most 200 characters; required unless Config.NameOptional"},
			}),
			OK: schemaRef("PasskeyOptions"), Cookies: beganCookie, SetCookies: []string{ChallengeCookie},
			Errors: []*auth.Error{auth.ErrFeatureDisabled, auth.ErrTooManyRequests, auth.ErrInvalidCharacters, auth.ErrEmailRequired, auth.ErrInvalidEmail,
				auth.ErrEmailTooLong, auth.ErrNameRequired, auth.ErrNameTooLong},
			Schemas: schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/signup/finish", h.signUpFinish, auth.Operation{
			ID: "finishPasskeySignUp", Summary: "Finish signing up with a passkey",
			Description: "The browser that began it. Counts against the registration limit of the client's address. Makes the account (no password, address unverified: the verification link is mailed), stores the passkey and signs the account in.",
			Body:        jsonBody(credential+", plus passkeyName.", obj{"passkeyName": obj{"type": "string", "description": "trimmed, at most 64 characters; default Passkey"}}),
			OK:          success, Cookies: "authkit_session, authkit_device; authkit_passkey expired",
			SetCookies: []string{"authkit_session", "authkit_device", ChallengeCookie},
			Errors: []*auth.Error{auth.ErrFeatureDisabled, auth.ErrPasskeyChallengeInvalid, auth.ErrNameTooLong, auth.ErrInvalidCharacters, auth.ErrTooManyRegistrations,
				auth.ErrPasskeyInvalid, auth.ErrEmailRegistered, auth.ErrPasskeyAlreadyRegistered},
			Hooks: "BeforeRegister, AfterRegister"}),
		auth.NewRoute(http.MethodPost, Prefix+"/reauth/begin", func(ctx context.Context, v *auth.Visit, _ auth.Request) (any, error) {
			return h.BeginReauthentication(ctx, v)
		}, auth.Operation{ID: "beginPasskeyReauthentication", Summary: "Begin re-authenticating with a passkey", Auth: "session",
			Description: "The user's passkeys allowed, user verification required. 404 passkey_not_found when the user has none. Counts against BeginLimit.",
			OK:          schemaRef("PasskeyOptions"), Cookies: beganCookie, SetCookies: []string{"authkit_session", ChallengeCookie},
			Errors:  []*auth.Error{auth.ErrNotAuthenticated, auth.ErrPasskeyNotFound, auth.ErrTooManyRequests},
			Schemas: schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/reauth/finish", h.reauthFinish, auth.Operation{
			ID: "finishPasskeyReauthentication", Summary: "Finish re-authenticating with a passkey", Auth: "session",
			Description: "As POST /api/auth/confirm-password, on accounts with and without a password or 2FA: the session counts as recently authenticated (a user-verified passkey is every factor).",
			Body:        jsonBody(credential+" (the assertion).", obj{}),
			OK:          success, Cookies: "authkit_session (reissued, authenticated now); authkit_passkey expired",
			SetCookies: []string{"authkit_session", ChallengeCookie},
			Errors:     []*auth.Error{auth.ErrPasskeyChallengeInvalid, auth.ErrNotAuthenticated, auth.ErrPasskeyInvalid, auth.ErrPasskeyCountRegressed}}),
		auth.NewRoute(http.MethodGet, Prefix, h.list, auth.Operation{
			ID: "listPasskeys", Summary: "The user's passkeys, oldest first", Auth: "session",
			OK:         closed(obj{"passkeys": obj{"type": "array", "items": schemaRef("Passkey")}}, "passkeys"),
			SetCookies: []string{"authkit_session"},
			Errors:     []*auth.Error{auth.ErrNotAuthenticated},
			Schemas:    schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/rename", h.rename, auth.Operation{
			ID: "renamePasskey", Summary: "Rename a passkey", Auth: "session",
			Body:       jsonBody("", obj{"id": obj{"type": "string", "description": "the credential id, base64url"}, "name": obj{"type": "string"}}),
			OK:         schemaRef("Passkey"),
			SetCookies: []string{"authkit_session"},
			Errors:     []*auth.Error{auth.ErrNotAuthenticated, auth.ErrPasskeyNotFound, auth.ErrNameRequired, auth.ErrInvalidCharacters, auth.ErrNameTooLong},
			Schemas:    schemas}),
		auth.NewRoute(http.MethodPost, Prefix+"/delete", h.remove, auth.Operation{
			ID: "deletePasskey", Summary: "Delete a passkey", Auth: "session",
			Description: "Needs a recent authentication. The last passkey of an account without a password, linked identity or sign-in by email is refused (last_sign_in_method).",
			Body:        jsonBody("", obj{"id": obj{"type": "string", "description": "the credential id, base64url"}}),
			OK:          success,
			SetCookies:  []string{"authkit_session"},
			Errors:      []*auth.Error{auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrPasskeyNotFound, auth.ErrLastSignInMethod}}),
		auth.StaticRoute(Prefix+"/passkeys.js", "text/javascript; charset=utf-8", script),
	}
}

// What the routes' Operations share.

type obj = map[string]any

var (
	beganCookie = "authkit_passkey (the begun ceremony, 5 minutes, Path=/api/passkeys, SameSite=Strict)"
	credential  = "JSON: the credential as PublicKeyCredential.toJSON() gives it (id, rawId, type, response, ...)"
	success     = closed(obj{"success": obj{"const": true}}, "success")

	// schemas are the named schemas of the routes' answers.
	schemas = obj{
		"PasskeyOptions": closed(obj{"publicKey": obj{"type": "object", "required": []string{"challenge"},
			"description": "the options of navigator.credentials.create or get, as PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON read them (binary members base64url)"}}, "publicKey"),
		"Passkey": closed(obj{
			"id": obj{"type": "string", "description": "the credential id, base64url"}, "name": obj{"type": "string"},
			"createdAt":      obj{"type": "string", "format": "date-time"},
			"lastUsedAt":     obj{"type": []string{"string", "null"}, "format": "date-time", "description": "null until first used"},
			"backupEligible": obj{"type": "boolean"}, "backedUp": obj{"type": "boolean"},
		}, "id", "name", "createdAt", "lastUsedAt", "backupEligible", "backedUp"),
	}
)

// jsonBody is a body read by readJSON: JSON only, fields its properties.
func jsonBody(desc string, fields obj) *auth.OperationBody {
	if desc == "" {
		desc = "JSON."
	}
	return &auth.OperationBody{Fields: fields, Description: desc,
		Errors: []*auth.Error{auth.ErrUnsupportedContentType, auth.ErrUnreadableBody, auth.ErrBodyTooLarge, auth.ErrInvalidJSON}}
}

func schemaRef(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func closed(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// The finish routes. A body that is not JSON (or too large, or of another
// content type) is refused before the ceremony is taken: nothing was
// verified, and the browser may send it again.

func (h *Handler) registerFinish(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	var f struct {
		Name string `json:"name"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	p, err := h.FinishRegistration(ctx, v, RegistrationInput{Credential: body, Name: f.Name})
	if err != nil {
		return nil, err
	}
	return view(p), nil
}

func (h *Handler) twoFactorFinish(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	var f struct {
		Remember    *bool `json:"remember"`
		TrustDevice bool  `json:"trustDevice"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	if _, err := h.FinishTwoFactor(ctx, v, TwoFactorInput{Assertion: body, Remember: f.Remember, TrustDevice: f.TrustDevice}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

func (h *Handler) loginFinish(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	var f struct {
		Remember *bool `json:"remember"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	if _, err := h.FinishLogin(ctx, v, LoginInput{Assertion: body, Remember: f.Remember != nil && *f.Remember}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

func (h *Handler) signUpBegin(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	var f struct {
		Email string `json:"email"`
		Name  string `json:"name"`
	}
	if _, err := readJSON(r, &f); err != nil {
		return nil, err
	}
	return h.BeginSignUp(ctx, v, SignUpInput{Email: f.Email, Name: f.Name})
}

func (h *Handler) signUpFinish(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	var f struct {
		PasskeyName string `json:"passkeyName"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	if _, err := h.FinishSignUp(ctx, v, SignUpFinishInput{Credential: body, PasskeyName: f.PasskeyName}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

// Management: the routes of auth.Service's ListPasskeys, RenamePasskey and
// DeletePasskey, where their rules are.

// View is a passkey as the list route shows it.
type View struct {
	ID             string     `json:"id"` // the credential id, base64url
	Name           string     `json:"name"`
	CreatedAt      time.Time  `json:"createdAt"`
	LastUsedAt     *time.Time `json:"lastUsedAt"` // null until first used
	BackupEligible bool       `json:"backupEligible"`
	BackedUp       bool       `json:"backedUp"`
}

// view is a passkey in the JSON of the routes.
func view(p auth.PasskeyInfo) View {
	v := View{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt.UTC(), BackupEligible: p.BackupEligible, BackedUp: p.BackedUp}
	if !p.LastUsedAt.IsZero() {
		t := p.LastUsedAt.UTC()
		v.LastUsedAt = &t
	}
	return v
}

func (h *Handler) list(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	keys, err := h.svc.ListPasskeys(ctx, v)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(keys))
	for i, p := range keys {
		out[i] = view(p)
	}
	return map[string]any{"passkeys": out}, nil
}

// change is the body of rename and delete.
type change struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (h *Handler) rename(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	if _, err := h.svc.CurrentUser(ctx, v); err != nil {
		return nil, err // not signed in: 401 before the body is read
	}
	var body change
	if _, err := readJSON(r, &body); err != nil {
		return nil, err
	}
	p, err := h.svc.RenamePasskey(ctx, v, auth.RenamePasskeyInput{ID: body.ID, Name: body.Name})
	if err != nil {
		return nil, err
	}
	return view(p), nil
}

func (h *Handler) remove(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	if _, err := h.svc.RecentUser(ctx, v); err != nil {
		return nil, err // not signed in or not recently: before the body is read
	}
	var body change
	if _, err := readJSON(r, &body); err != nil {
		return nil, err
	}
	if err := h.svc.DeletePasskey(ctx, v, auth.DeletePasskeyInput{ID: body.ID}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

// readJSON reads the request's JSON body, decodes it into dst and returns
// it.
func readJSON(r auth.Request, dst any) ([]byte, error) {
	if ct := r.Header("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, auth.ErrUnsupportedContentType
	}
	b, err := r.Body(maxBody)
	if errors.Is(err, auth.ErrBodyTooLarge) {
		return nil, auth.ErrBodyTooLarge
	}
	if err != nil {
		return nil, auth.ErrUnreadableBody
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return nil, auth.ErrInvalidJSON
	}
	return b, nil
}

// The script.

//go:embed assets/passkeys.js
var script []byte

// Script is assets/passkeys.js, which the handler's routes serve at
// Prefix+"/passkeys.js".
func Script() []byte { return bytes.Clone(script) }

package social

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
)

// The routes: each reads its request and calls one typed method;
// auth.Modules.Handle runs it. Start and callback answer redirects, never
// JSON: a browser follows them.

func (h *Handler) routes() []auth.Route {
	// Start and callback answer every failure with a 303 to the login
	// page, ?error={code}: the codes are in their descriptions, not
	// answered as statuses.
	return []auth.Route{
		auth.NewRoute(http.MethodGet, Prefix+"/{provider}/start", h.startRoute, auth.Operation{
			ID: "startSocialSignIn", Summary: "Sign in with a provider: redirect to it",
			Description: "302 to the provider's authorization URL with the authkit_oauth cookie; returnTo (query) is a path of the app, anything else is ignored. " +
				"A native app adds appRedirect (one of Config.AppRedirects) and codeChallenge (PKCE S256): the callback then sends the browser to appRedirect with ?code= to exchange at POST /api/auth/token/exchange, or ?error=; an unknown appRedirect is social_app_redirect_invalid. " +
				"A failure answers 303 to the login page with ?error= social_provider_unknown, social_provider_unavailable or too_many_requests. Counts against StartLimit.",
			Param: "the provider's name", Redirect: http.StatusFound,
			SetCookies: []string{StateCookie}, Storeless: true}),
		auth.NewRoute(http.MethodPost, Prefix+"/{provider}/link", h.linkRoute, auth.Operation{
			ID: "startSocialLink", Summary: "Link a provider to the signed-in account: redirect to it", Auth: "session",
			Description: "Needs a recent authentication. 303 to the provider's authorization URL with the authkit_oauth cookie; returnTo (query) as for start.",
			Param:       "the provider's name", Redirect: http.StatusSeeOther,
			SetCookies: []string{StateCookie, "authkit_session"},
			Errors:     []*auth.Error{auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrSocialProviderUnknown, auth.ErrSocialProviderUnavailable, auth.ErrTooManyRequests}}),
		auth.NewRoute(http.MethodGet, Prefix+"/{provider}/callback", h.callbackRoute, auth.Operation{
			ID: "socialCallback", Summary: "The provider's redirect back",
			Description: "Query: state, code, or error; iss (RFC 9207) when the provider sends it. Always 303: to returnTo signed in (or linked), to the 2FA page when a second step is due, " +
				"or to the login page with ?error= social_provider_unknown, social_state_invalid, social_failed, social_provider_unavailable, social_email_unverified, " +
				"social_link_required, social_signup_closed, social_identity_taken, too_many_logins, too_many_registrations, or a hook's code " +
				"(AfterLogin, BeforeRegister, AfterRegister). The authkit_oauth cookie is expired.",
			Param: "the provider's name", Redirect: http.StatusSeeOther,
			SetCookies: []string{StateCookie, "authkit_session", "authkit_device", "2fa_pending"}, Storeless: true}),
		auth.NewRoute(http.MethodPost, Prefix+"/{provider}/callback", h.formPostRoute, auth.Operation{
			ID: "socialFormPostCallback", Summary: "A provider's form_post answer (Apple): on to the GET callback",
			Description: "The provider's page posts state, code or error, iss and (Apple, on a first sign-in) user. The route changes nothing and takes posts from other sites: " +
				"it answers 303 to GET " + Prefix + "/{provider}/callback with those five fields in the query (id_token and anything else dropped), a top-level GET that carries the browser's SameSite=Lax authkit_oauth cookie, " +
				"which the provider's cross-site POST does not; the GET callback checks it. A body that is not a form answers 303 to the login page with ?error=social_failed; an unknown provider ?error=social_provider_unknown.",
			Param: "the provider's name", Redirect: http.StatusSeeOther, CrossSite: true, Storeless: true,
			Body: &auth.OperationBody{Form: true, Description: "application/x-www-form-urlencoded only", Fields: map[string]any{
				"state": map[string]any{"type": "string"}, "code": map[string]any{"type": "string"}, "error": map[string]any{"type": "string"},
				"iss": map[string]any{"type": "string"}, "user": map[string]any{"type": "string"}}}}),
		auth.NewRoute(http.MethodGet, "/api/auth/identities", h.listRoute, auth.Operation{
			ID: "listIdentities", Summary: "The signed-in user's linked provider accounts, oldest first", Auth: "session",
			OK: map[string]any{"type": "object", "required": []string{"identities"}, "additionalProperties": false, "properties": map[string]any{
				"identities": map[string]any{"type": "array", "items": map[string]any{"type": "object", "additionalProperties": false,
					"required": []string{"id", "provider", "email", "createdAt"},
					"properties": map[string]any{"id": map[string]any{"type": "string"}, "provider": map[string]any{"type": "string"},
						"email": map[string]any{"type": "string"}, "createdAt": map[string]any{"type": "string", "format": "date-time"}}}}}},
			SetCookies: []string{"authkit_session"},
			Errors:     []*auth.Error{auth.ErrNotAuthenticated}}),
		auth.NewRoute(http.MethodDelete, "/api/auth/identities/{id}", h.unlinkRoute, auth.Operation{
			ID: "unlinkIdentity", Summary: "Unlink a provider account", Auth: "session",
			Description: "Needs a recent authentication. Refused while it is the account's last way to sign in (no password, no passkey, no other identity).",
			Param:       "the identity's id",
			OK: map[string]any{"type": "object", "required": []string{"message"}, "additionalProperties": false,
				"properties": map[string]any{"message": map[string]any{"const": "Account unlinked"}}},
			SetCookies: []string{"authkit_session"},
			Errors:     []*auth.Error{auth.ErrNotAuthenticated, auth.ErrReauthenticationRequired, auth.ErrIdentityNotFound, auth.ErrLastSignInMethod}}),
	}
}

func (h *Handler) startRoute(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	q := v.Query()
	to, err := h.Start(ctx, v, StartInput{Provider: r.PathValue("provider"), ReturnTo: q.Get("returnTo"), Remember: q.Get("remember") == "true",
		AppRedirect: q.Get("appRedirect"), CodeChallenge: q.Get("codeChallenge")})
	if err != nil {
		return h.failed(ctx, v, err), nil
	}
	return auth.Redirect{Status: http.StatusFound, Location: to}, nil
}

func (h *Handler) linkRoute(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	to, err := h.StartLink(ctx, v, StartInput{Provider: r.PathValue("provider"), ReturnTo: v.Query().Get("returnTo")})
	if err != nil {
		return nil, err // a JSON answer: the caller is the app's page or script, signed in
	}
	return auth.Redirect{Status: http.StatusSeeOther, Location: to}, nil
}

func (h *Handler) callbackRoute(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	q := v.Query()
	res, err := h.Callback(ctx, v, CallbackInput{Provider: r.PathValue("provider"), State: q.Get("state"), Code: q.Get("code"),
		Error: q.Get("error"), Issuer: q.Get("iss"), User: q.Get("user")})
	switch {
	case res.App:
		return h.toApp(ctx, v, res, err), nil
	case err != nil:
		return h.failed(ctx, v, err), nil
	case res.Login != nil && res.Login.RequiresTwoFactor:
		return auth.Redirect{Status: http.StatusSeeOther, Location: h.cfg.TwoFactorPath}, nil
	}
	return auth.Redirect{Status: http.StatusSeeOther, Location: res.ReturnTo}, nil
}

// toApp sends the browser of a native app's sign-in to the app's
// redirect: with ?code= to exchange, or ?error={code}.
func (h *Handler) toApp(ctx context.Context, v *auth.Visit, res CallbackResult, err error) auth.Redirect {
	sep := "?"
	if strings.Contains(res.ReturnTo, "?") {
		sep = "&"
	}
	if err != nil {
		e := auth.AsError(err)
		h.svc.Modules().Answer(ctx, v, "social", nil, err) // logs what is not an *auth.Error
		return auth.Redirect{Status: http.StatusSeeOther, Location: res.ReturnTo + sep + "error=" + url.QueryEscape(string(e.Code))}
	}
	return auth.Redirect{Status: http.StatusSeeOther, Location: res.ReturnTo + sep + "code=" + url.QueryEscape(res.AppCode)}
}

// formPostFields are what formPostRoute hands on to the GET callback.
var formPostFields = []string{"state", "code", "error", "iss", "user"}

// maxFormPost bounds a form_post body: Apple's, its ID token included, is
// a few kilobytes.
const maxFormPost = 16 << 10

// formPostRoute takes a provider's response_mode=form_post answer. The
// POST comes from the provider's page, another site, so the browser does
// not send the SameSite=Lax state cookie with it; the route hands the
// answer on, unchanged, to the GET callback with a 303, a top-level
// navigation that carries the cookie, where Callback checks state,
// cookie and code as for any provider. It changes nothing itself: a
// forged post reaches only what a forged GET callback would.
func (h *Handler) formPostRoute(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	name := r.PathValue("provider")
	if _, ok := h.providers[name]; !ok {
		return h.failed(ctx, v, auth.ErrSocialProviderUnknown), nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header("Content-Type"))
	body, err := r.Body(maxFormPost)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return h.failed(ctx, v, auth.ErrSocialFailed), nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return h.failed(ctx, v, auth.ErrSocialFailed), nil
	}
	q := url.Values{}
	for _, f := range formPostFields {
		if val := form.Get(f); val != "" {
			q.Set(f, val)
		}
	}
	return auth.Redirect{Status: http.StatusSeeOther, Location: Prefix + "/" + name + "/callback?" + q.Encode()}, nil
}

// failed sends the browser to the login page with the error's code; an
// unexpected cause is logged as the JSON routes log theirs.
func (h *Handler) failed(ctx context.Context, v *auth.Visit, err error) auth.Redirect {
	e := auth.AsError(err)
	h.svc.Modules().Answer(ctx, v, "social", nil, err) // logs what is not an *auth.Error; the answer itself is not used
	sep := "?"
	if strings.Contains(h.cfg.LoginPath, "?") {
		sep = "&"
	}
	return auth.Redirect{Status: http.StatusSeeOther, Location: h.cfg.LoginPath + sep + "error=" + url.QueryEscape(string(e.Code))}
}

func (h *Handler) listRoute(ctx context.Context, v *auth.Visit, _ auth.Request) (any, error) {
	ids, err := h.Identities(ctx, v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"identities": ids}, nil
}

func (h *Handler) unlinkRoute(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	if err := h.Unlink(ctx, v, r.PathValue("id")); err != nil {
		return nil, err
	}
	return map[string]string{"message": "Account unlinked"}, nil
}

package passkeys

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// The JSON routes under Prefix: each decodes its body, calls one typed
// method (the ceremonies in passkeys.go, the management methods of
// auth.Service) and renders what it returns with auth.Service.Answer.

// maxBody caps the finish bodies: a credential with its attestation is a
// few kilobytes.
const maxBody = 64 << 10

// ServeHTTP serves the routes under Prefix (see the package docs).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// route is one JSON route: it returns the answer's body or an error; the
// cookies and headers of the answer are the visit's.
type route func(r *http.Request, v *auth.Visit) (any, error)

func (h *Handler) routes() {
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET "+Prefix+"/passkeys.js", serveScript)
	allow := map[string]string{Prefix + "/passkeys.js": "GET, HEAD"}
	for _, rt := range []struct {
		pattern string
		fn      route
	}{
		{"POST " + Prefix + "/register/begin", func(r *http.Request, v *auth.Visit) (any, error) { return h.BeginRegistration(r.Context(), v) }},
		{"POST " + Prefix + "/register/finish", h.registerFinish},
		{"POST " + Prefix + "/2fa/begin", func(r *http.Request, v *auth.Visit) (any, error) { return h.BeginTwoFactor(r.Context(), v) }},
		{"POST " + Prefix + "/2fa/finish", h.twoFactorFinish},
		{"POST " + Prefix + "/login/begin", func(r *http.Request, v *auth.Visit) (any, error) { return h.BeginLogin(r.Context(), v) }},
		{"POST " + Prefix + "/login/finish", h.loginFinish},
		{"GET " + Prefix, h.list},
		{"POST " + Prefix + "/rename", h.rename},
		{"POST " + Prefix + "/delete", h.remove},
	} {
		h.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, rt.pattern, rt.fn) })
		method, path, _ := strings.Cut(rt.pattern, " ")
		allow[path] = method
	}
	// Any other method on a known path, and any other path: JSON, as
	// core's routes answer them.
	other := func(w http.ResponseWriter, r *http.Request) {
		req := auth.HTTPRequest(r, nil)
		resp := h.svc.NotFound(req)
		if a, ok := allow[r.URL.Path]; ok {
			resp = h.svc.MethodNotAllowed(req, a)
		}
		resp.Write(w)
	}
	h.mux.HandleFunc(Prefix, other)
	h.mux.HandleFunc(Prefix+"/", other)
}

// serve runs one route: the cross-origin check of every state-changing
// route, the route, and one answer.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, op string, fn route) {
	req := auth.HTTPRequest(r, nil)
	v := h.svc.Visit(req)
	// The route is the flow (auth.Service.Observe): the typed method it
	// calls runs inside it and reports nothing of its own.
	method, pattern, _ := strings.Cut(op, " ")
	rt := auth.Route{Method: method, Pattern: pattern}
	ctx, end := h.svc.Observe(r.Context(), v, auth.Flow{Name: rt.Flow(), Route: rt})
	if ctx != r.Context() { // an Observer's flow: no copy of the request without one
		r = r.WithContext(ctx)
	}
	var err error
	defer func() {
		// No request may end the process: a panic outside the ceremonies'
		// own guard answers 500, as core's routes do.
		if p := recover(); p != nil {
			h.cfg.Logger.ErrorContext(r.Context(), "passkeys: panic in route", "route", op, "panic", p)
			err = fmt.Errorf("passkeys: panic in route %s: %v", op, p)
			resp := h.svc.Error(http.StatusInternalServerError, "")
			resp.Write(w)
		}
		end(err)
	}()
	var body any
	if r.Method != http.MethodGet {
		err = h.svc.CheckOrigin(req)
	}
	if err == nil {
		body, err = fn(r, v)
	}
	resp := h.svc.Answer(r.Context(), v, op, body, err)
	resp.Write(w)
}

// The finish routes. A body that is not JSON (or too large, or of another
// content type) is refused before the ceremony is taken: nothing was
// verified, and the browser may send it again.

func (h *Handler) registerFinish(r *http.Request, v *auth.Visit) (any, error) {
	var f struct {
		Name string `json:"name"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	p, err := h.FinishRegistration(r.Context(), v, RegistrationInput{Credential: body, Name: f.Name})
	if err != nil {
		return nil, err
	}
	return view(p), nil
}

func (h *Handler) twoFactorFinish(r *http.Request, v *auth.Visit) (any, error) {
	var f struct {
		Remember    *bool `json:"remember"`
		TrustDevice bool  `json:"trustDevice"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	if _, err := h.FinishTwoFactor(r.Context(), v, TwoFactorInput{Assertion: body, Remember: f.Remember, TrustDevice: f.TrustDevice}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

func (h *Handler) loginFinish(r *http.Request, v *auth.Visit) (any, error) {
	var f struct {
		Remember *bool `json:"remember"`
	}
	body, err := readJSON(r, &f)
	if err != nil {
		return nil, err
	}
	if _, err := h.FinishLogin(r.Context(), v, LoginInput{Assertion: body, Remember: f.Remember != nil && *f.Remember}); err != nil {
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

func (h *Handler) list(r *http.Request, v *auth.Visit) (any, error) {
	keys, err := h.svc.ListPasskeys(r.Context(), v)
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

func (h *Handler) rename(r *http.Request, v *auth.Visit) (any, error) {
	if _, err := h.svc.CurrentUser(r.Context(), v); err != nil {
		return nil, err // not signed in: 401 before the body is read
	}
	var body change
	if _, err := readJSON(r, &body); err != nil {
		return nil, err
	}
	p, err := h.svc.RenamePasskey(r.Context(), v, auth.RenamePasskeyInput{ID: body.ID, Name: body.Name})
	if err != nil {
		return nil, err
	}
	return view(p), nil
}

func (h *Handler) remove(r *http.Request, v *auth.Visit) (any, error) {
	if _, err := h.svc.RecentUser(r.Context(), v); err != nil {
		return nil, err // not signed in or not recently: before the body is read
	}
	var body change
	if _, err := readJSON(r, &body); err != nil {
		return nil, err
	}
	if err := h.svc.DeletePasskey(r.Context(), v, auth.DeletePasskeyInput{ID: body.ID}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

// readJSON reads the request's JSON body, decodes it into dst and returns
// it.
func readJSON(r *http.Request, dst any) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, auth.ErrUnsupportedContentType
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, auth.ErrUnreadableBody
	}
	if len(b) > maxBody {
		return nil, auth.ErrBodyTooLarge
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return nil, auth.ErrInvalidJSON
	}
	return b, nil
}

// The script.

//go:embed assets/passkeys.js
var script []byte

// Script is assets/passkeys.js, which the handler serves at
// Prefix+"/passkeys.js".
func Script() []byte { return bytes.Clone(script) }

func serveScript(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(script)
}

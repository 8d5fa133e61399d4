package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/session"
)

// Visit is one request as the flows need it, resolved once: the cookies
// the client holds (its session and its pending 2FA login), its address as
// rate limits key it, and the cookies and headers the answer must carry.
// Every typed method takes one; the JSON routes make one per request.
//
// An app that calls the flows from its own handlers makes one with
// [Service.Visit] from the framework module's request adapter, and after
// the call writes [Visit.Cookies] and [Visit.Header] on its own response,
// or the error as the JSON routes answer it. Each framework module has a
// one-liner for each step (nethttpauth.Visit, WriteHeaders, WriteError;
// the same in ginauth and fiberauth):
//
//	v := nethttpauth.Visit(r, svc) // svc.Visit(nethttpauth.Request(r))
//	res, err := svc.Login(r.Context(), v, auth.LoginInput{Email: email, Password: pw})
//	if err != nil {
//		nethttpauth.WriteError(w, r, svc, v, err) // as POST /api/login answers it
//		return
//	}
//	nethttpauth.WriteHeaders(w, v) // the session or 2fa_pending cookie, the rate-limit headers
//
// A Visit holds no context: the typed method's ctx is the call's one.
//
// A Visit belongs to one request and is not safe for concurrent use.
type Visit struct {
	req     Request
	sess    *session.Session
	cookies []*http.Cookie
	header  http.Header
	lang    *i18n.Language // the answer's language: nil for English

	// The client, resolved once by s when a flow first needs it (client,
	// userAgent): the rate-limit keys, audit events, notices and session
	// and trusted-device records of one request all read these, never the
	// request again.
	s      *Service
	ip     string // the client's rate-limit key, "unknown" when there is none; "" until resolved
	addr   string // the client's whole address, for notices and records; "" when unknown
	ua     string // the User-Agent, cleaned to quote (cleanUserAgent)
	uaRead bool

	// Token mode (tokens.go).
	tokenMode bool
	bearer    string  // the Authorization: Bearer token, "" for none
	pending   string  // the pending token handed out, prefix included
	issued    *Tokens // tokens a hand-off exchange hands out (ExchangeCode)
}

// Visit returns the Visit of request r.
func (s *Service) Visit(r Request) *Visit {
	v := &Visit{req: r, header: http.Header{}, s: s}
	if s.cfg.Tokens.Enabled {
		v.bearer, v.tokenMode = tokenRequest(r)
	}
	if v.tokenMode {
		v.sess = s.sessions.TokenSession(v.bearer)
	} else {
		v.sess = s.sessions.Session(bridge{v})
	}
	if s.cfg.Catalog != nil {
		v.lang = s.cfg.Catalog.Match(r.Header("Accept-Language"))
	}
	return v
}

// context is the context of a typed method's store and hasher calls: the
// ctx the caller passed, or the request's for a nil one. A Visit holds no
// context of its own, so a caller's deadline, cancellation and trace are
// the ones every call of the flow gets.
func (v *Visit) context(ctx context.Context) context.Context {
	if ctx == nil {
		return v.req.Context()
	}
	return ctx
}

// Cookies returns the cookies the answer must set, in order: at most one
// of each name.
func (v *Visit) Cookies() []*http.Cookie { return v.cookies }

// Header returns the headers the answer must carry: the rate-limit headers
// of docs/api.md, Rate limits (X-RateLimit-Remaining, X-RateLimit-Reset, and
// Retry-After when a limit refused the flow).
func (v *Visit) Header() http.Header { return v.header }

// WriteHeaders adds the visit's headers and Set-Cookie lines to w, before
// the app writes its own status and body. Call it once per request, after
// the flow: each call adds the Set-Cookie lines again.
func (v *Visit) WriteHeaders(w http.ResponseWriter) { setHeaders(w, v.header, v.cookies) }

// SetLanguage makes l (one of Config.Catalog's, or nil for English) the
// language of the visit's texts and mails, for an app that knows the
// user's language better than the Accept-Language header does.
func (v *Visit) SetLanguage(l *i18n.Language) { v.lang = l }

// Language returns the visit's language: the Accept-Language header's
// choice among Config.Catalog's languages, nil for English.
func (v *Visit) Language() *i18n.Language { return v.lang }

// ClientIP returns the client's address as rate limits key it (see
// [Service.ClientIP]), resolved once per visit.
func (v *Visit) ClientIP() string {
	v.client()
	return v.ip
}

// client resolves the client's address once: the socket peer, or the
// X-Forwarded-For entry Config.Proxies chooses.
func (v *Visit) client() {
	if v.ip != "" {
		return
	}
	ip, ok := v.s.resolveClient(v.req)
	v.ip = clientKeyOf(ip, ok)
	switch {
	case !ok:
	case ip.Is4():
		v.addr = v.ip // the key of an IPv4 address is the address
	default:
		v.addr = ip.String() // an IPv6 key is the /64
	}
}

// clientAddr is the client's address as notices and records show it: the
// whole address (rate limits key IPv6 clients by their /64), "" when
// unknown.
func (v *Visit) clientAddr() string {
	v.client()
	return v.addr
}

// userAgent is the request's User-Agent, cleaned to quote in a mail or a
// record (cleanUserAgent), read once.
func (v *Visit) userAgent() string {
	if !v.uaRead {
		v.uaRead = true
		v.ua = cleanUserAgent(v.req.Header("User-Agent"))
	}
	return v.ua
}

// Cookie returns the value of the request's cookie name, for modules
// built on the Service that keep state of their own in a cookie (the
// passkeys module's challenge cookie). ok is false when the request has
// none.
func (v *Visit) Cookie(name string) (value string, ok bool) { return v.req.Cookie(name) }

// SetCookie adds ck to the cookies the answer sets ([Visit.Cookies]), for
// modules built on the Service: a later cookie with the same name, path
// and domain replaces an earlier one, so an answer never sets one twice.
// The caller chooses its attributes (Secure, HttpOnly, SameSite); the
// cookie goes out with the answer whatever it is, an error included.
func (v *Visit) SetCookie(ck *http.Cookie) { v.setCookie(ck) }

// bridge is the session.CookieBridge over a visit's request and the
// cookies its answer will set.
type bridge struct{ v *Visit }

func (b bridge) Get(name string) (string, bool) { return b.v.req.Cookie(name) }

func (b bridge) Set(name, value string, o session.CookieOptions) {
	b.v.setCookie(&http.Cookie{Name: name, Value: value, Path: o.Path, Domain: o.Domain, MaxAge: o.MaxAge,
		Secure: o.Secure, HttpOnly: o.HTTPOnly, SameSite: o.SameSite})
}

func (b bridge) Delete(name string, o session.CookieOptions) {
	b.v.setCookie(&http.Cookie{Name: name, Value: "", Path: o.Path, Domain: o.Domain, MaxAge: -1,
		Secure: o.Secure, HttpOnly: o.HTTPOnly, SameSite: o.SameSite})
}

// setCookie records a cookie for the answer; a later cookie of the same
// name replaces an earlier one, so an answer never carries two.
func (v *Visit) setCookie(ck *http.Cookie) {
	for i, old := range v.cookies {
		if old.Name == ck.Name && old.Path == ck.Path && old.Domain == ck.Domain {
			v.cookies[i] = ck
			return
		}
	}
	v.cookies = append(v.cookies, ck)
}

// Rendering. The typed methods return (result, error); the JSON routes
// turn both into a Response here and nowhere else.

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error      string `json:"error"`
	Code       Code   `json:"code"`
	RetryAfter string `json:"retryAfter,omitempty"` // 429: the window's end, ISO 8601 (docs/api.md, Rate limits)
}

// messageBody is the JSON of the answers that are a message.
type messageBody struct {
	Message string `json:"message"`
}

// answer renders a flow's outcome: 200 with body, or the error.
func (s *Service) answer(ctx context.Context, v *Visit, op string, body any, err error) Response {
	if err != nil {
		return s.failure(ctx, v, op, err)
	}
	return s.respond(v, http.StatusOK, body)
}

// listRoute answers a route that lists the signed-in user's things: what
// list returns, each as toJSON shows it, in an array under key. op names
// the route in a failure.
func listRoute[T, J any](ctx context.Context, s *Service, v *Visit, op, key string, list func(context.Context, *Visit) ([]T, error), toJSON func(T) J) Response {
	items, err := list(ctx, v)
	if err != nil {
		return s.failure(ctx, v, op, err)
	}
	out := make([]J, len(items))
	for i, it := range items {
		out[i] = toJSON(it)
	}
	return s.respond(v, http.StatusOK, map[string][]J{key: out})
}

// failure renders err. An *Error answers as it says: a 429 with the
// limit's headers and no cookies, every other with the visit's cookies and
// headers. Any other error is unexpected: its cause goes to the log (a
// canceled request at debug level only, as nobody waits for the answer),
// never to the client, who gets 503 for a backend that failed and 500
// otherwise.
func (s *Service) failure(ctx context.Context, v *Visit, op string, err error) Response {
	e := AsError(err)
	if e.Status == http.StatusTooManyRequests {
		r := s.json(e.Status, errorBody{Error: e.translate(v.lang), Code: e.Code, RetryAfter: isoTime(e.RetryAfter)})
		for k, vs := range e.limit {
			r.Header[k] = vs
		}
		s.languageHeaders(v, r.Header)
		return r
	}
	var known *Error
	if !errors.As(err, &known) {
		switch {
		case errors.Is(err, context.Canceled) && ctx.Err() != nil:
			s.log.DebugContext(ctx, "authkit: request canceled", "op", op)
		case e == ErrUnavailable:
			s.log.ErrorContext(ctx, "authkit: backend unavailable", "op", op, "err", err)
		default:
			s.log.ErrorContext(ctx, "authkit: internal error", "op", op, "err", err)
		}
	}
	r := s.respond(v, e.Status, errorBody{Error: e.translate(v.lang), Code: e.Code})
	if e == ErrNotAuthenticated && strings.HasPrefix(v.bearer, session.AccessPrefix) {
		r.Header.Set("WWW-Authenticate", `Bearer error="invalid_token"`) // RFC 6750 3.1: the access token did not do
	}
	return r
}

// Text returns the text of what err answers with (see AsError) in the
// visit's language, for an app that shows errors on its own pages.
func (m *Modules) Text(v *Visit, err error) string {
	if e := AsError(err); e != nil {
		return e.translate(v.lang)
	}
	return ""
}

// say is a success message in the visit's language: key is its catalog
// key, english its text.
func (s *Service) say(v *Visit, key, english string) messageBody {
	if t := v.lang.Text(key, nil); t != "" {
		return messageBody{t}
	}
	return messageBody{english}
}

// languageHeaders marks an answer of a Service with a catalog: its text
// depends on Accept-Language (Vary), and says which language it is in.
func (s *Service) languageHeaders(v *Visit, h http.Header) {
	if s.cfg.Catalog == nil {
		return
	}
	h.Set("Vary", "Accept-Language")
	if v.lang != nil {
		h.Set("Content-Language", v.lang.Tag().String())
	}
}

// respond builds an answer: JSON body, Cache-Control: no-store, the
// visit's headers and cookies, and Retry-After on a 503.
func (s *Service) respond(v *Visit, status int, body any) Response {
	r := s.json(status, body)
	if v.tokenMode && status == http.StatusOK {
		r.Body = v.withTokens(r.Body)
	}
	for k, vs := range v.header {
		r.Header[k] = vs
	}
	r.Cookies = v.cookies
	retryAfterUnavailable(&r)
	s.languageHeaders(v, r.Header)
	return r
}

// json encodes body as an answer with authkit's headers.
func (s *Service) json(status int, body any) Response { return jsonResponse(status, body) }

// jsonResponse encodes body as an answer with authkit's headers.
func jsonResponse(status int, body any) Response {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)                 // URIs keep their '&'; the body is JSON, never HTML
	if err := enc.Encode(body); err != nil { // only authkit's own values are encoded
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"Internal server error","code":"internal_error"}`)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return Response{
		Status: status,
		Header: http.Header{
			"Content-Type":           {"application/json; charset=utf-8"},
			"Cache-Control":          {"no-store"},
			"X-Content-Type-Options": {"nosniff"},
		},
		Body: b,
	}
}

// RetryAfterUnavailable is the Retry-After, in seconds, of every 503
// authkit answers: a backend (store, limit store) is down, and a client or
// a load balancer should try again soon, not hammer the instance.
const RetryAfterUnavailable = 5

// retryAfterUnavailable adds Retry-After to r when it is a 503.
func retryAfterUnavailable(r *Response) {
	if r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") == "" {
		r.Header.Set("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	}
}

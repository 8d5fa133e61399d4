package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeRequest is a neutral request for unit tests of the decisions.
type fakeRequest struct {
	method, host, remote string
	headers              map[string]string
	params               map[string]string
	cookies              map[string]string
	body                 []byte
	ctx                  context.Context // nil: context.Background()
}

func (f *fakeRequest) Context() context.Context {
	if f.ctx != nil {
		return f.ctx
	}
	return context.Background()
}
func (f *fakeRequest) Method() string               { return f.method }
func (f *fakeRequest) Host() string                 { return f.host }
func (f *fakeRequest) Header(name string) string    { return f.headers[name] }
func (f *fakeRequest) PathValue(name string) string { return f.params[name] }
func (f *fakeRequest) RemoteAddr() string           { return f.remote }
func (f *fakeRequest) Cookie(name string) (string, bool) {
	v, ok := f.cookies[name]
	return v, ok
}
func (f *fakeRequest) Body(limit int64) ([]byte, error) {
	if int64(len(f.body)) > limit {
		return nil, fmt.Errorf("fake: %w", ErrBodyTooLarge)
	}
	return f.body, nil
}

func jsonReq(body string) *fakeRequest {
	return &fakeRequest{method: "POST", headers: map[string]string{"Content-Type": "application/json"}, body: []byte(body)}
}

func TestDecode(t *testing.T) {
	fields := []field{str("email"), str("password"), boolean("remember")}
	tests := []struct {
		name, ct, body string
		status         int
		msg            string
		email          string
		remember       bool
	}{
		{"json", "application/json", `{"email":"a@b.c","password":"pw","remember":true}`, 0, "", "a@b.c", true},
		{"json charset", "application/json; charset=utf-8", `{"email":"a@b.c"}`, 0, "", "a@b.c", false},
		{"no content type is json", "", `{"email":"a@b.c"}`, 0, "", "a@b.c", false},
		{"unknown fields ignored", "application/json", `{"email":"a@b.c","x":{"y":[1,2,{"z":null}]}}`, 0, "", "a@b.c", false},
		{"empty body", "application/json", ``, 0, "", "", false},
		{"whitespace body", "application/json", " \n ", 0, "", "", false},
		{"form", "application/x-www-form-urlencoded", `email=a%40b.c&remember=on`, 0, "", "a@b.c", true},
		{"malformed json", "application/json", `{"email":`, 400, "Invalid JSON body", "", false},
		{"trailing garbage", "application/json", `{"email":"a@b.c"} {}`, 400, "Invalid JSON body", "", false},
		{"trailing letter", "application/json", `{}A`, 400, "Invalid JSON body", "", false},
		{"trailing bracket", "application/json", `{"email":"a@b.c"}]`, 400, "Invalid JSON body", "", false},
		{"trailing comma", "application/json", `{"email":"a@b.c"}, 1`, 400, "Invalid JSON body", "", false},
		{"array", "application/json", `["a"]`, 400, "Request body must be a JSON object", "", false},
		{"string", "application/json", `"a"`, 400, "Request body must be a JSON object", "", false},
		{"number for string", "application/json", `{"email":5}`, 400, "email must be a string", "", false},
		{"null for string", "application/json", `{"email":null}`, 400, "email must be a string", "", false},
		{"object for string", "application/json", `{"email":{"$gt":""}}`, 400, "email must be a string", "", false},
		{"string for bool", "application/json", `{"remember":"yes"}`, 400, "remember must be a boolean", "", false},
		{"duplicate key", "application/json", `{"email":"a@b.c","email":"x@y.z"}`, 400, "Duplicate field: email", "", false},
		{"duplicate unknown key", "application/json", `{"x":1,"x":2}`, 400, "Duplicate field: x", "", false},
		{"invalid utf-8", "application/json", "{\"email\":\"a\xffb\"}", 400, "Request body must be valid UTF-8", "", false},
		{"escaped NUL", "application/json", `{"email":"a\u0000b"}`, 400, "email contains invalid characters", "", false},
		{"escaped CRLF", "application/json", `{"password":"a\r\nBcc: x"}`, 400, "password contains invalid characters", "", false},
		{"bidi override", "application/json", "{\"email\":\"a\u202eb\"}", 400, "email contains invalid characters", "", false},
		{"lone surrogate escape", "application/json", `{"email":"\ud800"}`, 400, "email contains invalid characters", "", false},
		{"form duplicate", "application/x-www-form-urlencoded", `email=a&email=b`, 400, "Duplicate field: email", "", false},
		{"form bad escape", "application/x-www-form-urlencoded", `email=%zz`, 400, "Invalid form body", "", false},
		{"form bad bool", "application/x-www-form-urlencoded", `remember=maybe`, 400, "remember must be a boolean", "", false},
		{"form invalid utf-8 escape", "application/x-www-form-urlencoded", `email=%ff`, 400, "Request body must be valid UTF-8", "", false},
		{"text/plain", "text/plain", `{"email":"a@b.c"}`, 415, "Unsupported content type", "", false},
		{"multipart", "multipart/form-data; boundary=x", `--x--`, 415, "Unsupported content type", "", false},
		{"bad media type", "application/json; ===", `{}`, 415, "Unsupported content type", "", false},
		{"deep nesting", "application/json", `{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, 400, "Invalid JSON body", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := jsonReq(tt.body)
			r.headers["Content-Type"] = tt.ct
			in, err := decode(r, 1<<20, fields...)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if in.str("email") != tt.email || in.flag("remember") != tt.remember {
					t.Fatalf("decoded email=%q remember=%v", in.str("email"), in.flag("remember"))
				}
				return
			}
			var ie *Error
			if !errors.As(err, &ie) || ie.Status != tt.status || ie.Message != tt.msg || ie.Code == "" {
				t.Fatalf("decode error = %v, want %d %q", err, tt.status, tt.msg)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	_, err := decode(jsonReq(`{"email":"`+strings.Repeat("a", 100)+`"}`), 50, str("email"))
	var ie *Error
	if !errors.As(err, &ie) || ie.Status != 413 || ie.Message != "Request body too large" || ie.Code != "body_too_large" {
		t.Fatalf("got %v", err)
	}
}

func TestNormalizeEmail(t *testing.T) {
	ok := map[string]string{
		"Ada@Example.COM":        "ada@example.com",
		"  ada@example.com \t":   "ada@example.com",
		"a.b+tag@sub.example.io": "a.b+tag@sub.example.io",
		"josé@exämple.com":       "josé@exämple.com",
	}
	for in, want := range ok {
		if got, err := normalizeEmail(in); err != nil || got != want {
			t.Errorf("normalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                  "Email is required",
		"   ":                               "Email is required",
		"ada":                               "Invalid email address",
		"@example.com":                      "Invalid email address",
		"ada@":                              "Invalid email address",
		"Ada <ada@example.com>":             "Invalid email address",
		"ada@example.com, eve@example.com":  "Invalid email address",
		"ada@@example.com":                  "Invalid email address",
		"ada@.example.com":                  "Invalid email address",
		"ada@example..com":                  "Invalid email address",
		"\"a b\"@example.com":               "Invalid email address",
		strings.Repeat("a", 250) + "@b.com": "Email address is too long",
	}
	for in, want := range bad {
		_, err := normalizeEmail(in)
		var ie *Error
		if !errors.As(err, &ie) || ie.Message != want || ie.Status != 400 {
			t.Errorf("normalizeEmail(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestColonPattern(t *testing.T) {
	for in, want := range map[string]string{
		"/api/login":                     "/api/login",
		"/api/auth/verify-email/{token}": "/api/auth/verify-email/:token",
		"/a/{x}/b/{y}":                   "/a/:x/b/:y",
	} {
		if got := (Route{Pattern: in}).ColonPattern(); got != want {
			t.Errorf("ColonPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"email":"a@b.c","remember":true}`, `{"email":5}`, `[`, "", `{"a":{"b":[]}}`, "email=a&x=%zz"} {
		f.Add("application/json", []byte(s))
		f.Add("application/x-www-form-urlencoded", []byte(s))
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		r := &fakeRequest{headers: map[string]string{"Content-Type": ct}, body: body}
		in, err := decode(r, 1<<16, str("email"), str("password"), boolean("remember"))
		if err != nil {
			var ie *Error
			if !errors.As(err, &ie) || ie.Status < 400 || ie.Status > 499 || ie.Message == "" || ie.Code == "" {
				t.Fatalf("decode error %v is not a client error", err)
			}
			return
		}
		for k, v := range in.strs {
			if !printable(v) {
				t.Fatalf("field %s passed with unprintable %q", k, v)
			}
		}
	})
}

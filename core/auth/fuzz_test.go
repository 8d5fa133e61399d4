package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalizeEmail checks the one validator every email field passes
// through before a store or a rate-limit key sees it. It never panics;
// it fails only with a 400 naming the problem; and what it accepts is a
// canonical address: at most 254 bytes, lowercase, without white space,
// with a local part and a domain, valid UTF-8 and printable when the
// input was (decode guarantees that much), and normalising it again
// changes nothing, so one account has one rate-limit key.
func FuzzNormalizeEmail(f *testing.F) {
	for _, s := range []string{
		"a@b.c",
		"  Alice@Example.COM \t",
		"",
		"@",
		"a@",
		"@b.c",
		"a@b..c",
		"a@.b",
		"a@b.",
		`"a b"@c.d`,
		"Alice <a@b.c>",
		"a@[127.0.0.1]",
		"a@b.c, d@e.f",
		"a(comment)@b.c",
		"jürgen@bäck.de",
		"İ@b.c",
		"a\u200b@b.c",
		"a@b.c\x00",
		"\xff@b.c",
		strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com",
		strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + ".com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := normalizeEmail(raw)
		if err != nil {
			var ie *Error
			if !errors.As(err, &ie) || ie.Status != 400 || ie.Message == "" || ie.Code == "" || e != "" {
				t.Fatalf("normalizeEmail(%q) = %q, %v; want \"\" and a 400 input error", raw, e, err)
			}
			return
		}
		at := strings.LastIndexByte(e, '@')
		switch {
		case len(e) == 0 || len(e) > maxEmailBytes:
			t.Fatalf("normalizeEmail(%q) = %q: %d bytes", raw, e, len(e))
		case e != strings.ToLower(e):
			t.Fatalf("normalizeEmail(%q) = %q: not lowercase", raw, e)
		case strings.ContainsAny(e, " \t\r\n"):
			t.Fatalf("normalizeEmail(%q) = %q: white space", raw, e)
		case at <= 0 || at == len(e)-1:
			t.Fatalf("normalizeEmail(%q) = %q: no local part and domain", raw, e)
		case utf8.ValidString(raw) && printable(raw) && !printable(e):
			t.Fatalf("normalizeEmail(%q) = %q: printable input, unprintable address", raw, e)
		}
		if again, err := normalizeEmail(e); again != e || err != nil {
			t.Fatalf("normalizeEmail(%q) = %q, %v; normalising %q again gave something else", e, again, err, raw)
		}
	})
}

// FuzzDecodeStrict holds decode to an independent oracle: the standard
// library's own parsers. Whatever decode accepts as JSON must be one valid
// JSON object (nothing before or after it) whose requested fields hold
// exactly the decoded values; whatever it accepts as a form must parse
// with url.ParseQuery, each requested field once, with exactly the decoded
// value. FuzzDecode (input_test.go) checks the error side.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []struct{ ct, body string }{
		{"application/json", `{"email":"a@b.c","password":"pw","remember":true}`},
		{"", `{"email":"a@b.c"}`},
		{"application/json; charset=utf-8", ` {"email":"a@b.c"} `},
		{"application/json", `{"email":"a"}{}`},
		{"application/json", `{"email":"a","em\u0061il":"b"}`},
		{"application/json", `{"Email":"a","remember":false,"x":{"y":[1,2]}}`},
		{"application/x-www-form-urlencoded", "email=a%40b.c&password=p+w&remember=on"},
		{"application/x-www-form-urlencoded", "email=a&email=b"},
		{"application/x-www-form-urlencoded", "email=a;password=b"},
	} {
		f.Add(s.ct, []byte(s.body))
	}
	fields := []field{str("email"), str("password"), boolean("remember")}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		r := &fakeRequest{headers: map[string]string{"Content-Type": ct}, body: body}
		in, err := decode(r, 1<<16, fields...)
		if err != nil {
			return
		}
		mt := ""
		if ct != "" {
			mt, _, _ = mime.ParseMediaType(ct)
		}
		switch mt {
		case "", "application/json":
			if len(bytes.TrimSpace(body)) == 0 {
				if len(in.strs)+len(in.bools) != 0 {
					t.Fatalf("empty body decoded to %+v", in)
				}
				return
			}
			var obj map[string]any
			if !json.Valid(body) || json.Unmarshal(body, &obj) != nil || obj == nil {
				t.Fatalf("decode accepted %q, which is not one JSON object", body)
			}
			for _, fl := range fields {
				v, present := obj[fl.name]
				got, decoded := in.strs[fl.name], fl.kind == kindString
				var gotAny any = got
				if !decoded {
					gotAny = in.bools[fl.name]
				}
				if present != hasField(in, fl) || present && v != gotAny {
					t.Fatalf("decode(%q): %s = %v (present %v); the JSON holds %v (present %v)", body, fl.name, gotAny, hasField(in, fl), v, present)
				}
			}
		case "application/x-www-form-urlencoded":
			vals, err := url.ParseQuery(string(body))
			if err != nil {
				t.Fatalf("decode accepted %q, which url.ParseQuery rejects: %v", body, err)
			}
			for _, fl := range fields {
				vs, present := vals[fl.name]
				if present != hasField(in, fl) || len(vs) > 1 {
					t.Fatalf("decode(%q): field %s decoded %v, form values %q", body, fl.name, hasField(in, fl), vs)
				}
				if present && fl.kind == kindString && vs[0] != in.strs[fl.name] {
					t.Fatalf("decode(%q): %s = %q, form value %q", body, fl.name, in.strs[fl.name], vs[0])
				}
			}
		default:
			t.Fatalf("decode accepted content type %q", ct)
		}
	})
}

func hasField(in input, fl field) bool {
	if fl.kind == kindString {
		_, ok := in.strs[fl.name]
		return ok
	}
	_, ok := in.bools[fl.name]
	return ok
}

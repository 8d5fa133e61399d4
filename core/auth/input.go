package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Input decoding. Only core decodes request bodies, so malformed JSON, wrong
// types, duplicate keys and invalid UTF-8 get the same answer on every
// framework. A body is JSON (application/json, or no Content-Type at all)
// or a form post (application/x-www-form-urlencoded); both decode into the
// same flat set of fields, and anything else is rejected before a store or
// a hasher sees it.

// Limits on single fields, in bytes, checked before any other work.
const (
	maxEmailBytes    = 254 // RFC 5321 path limit
	maxPasswordBytes = 1024
	maxCodeBytes     = 64
	maxNameRunes     = 200
)

type fieldKind int

const (
	kindString fieldKind = iota
	kindBool
	kindStrings // a JSON array of strings; in a form, one value of words split by spaces or commas
	kindInt     // a JSON integer; in a form, decimal digits
)

// field describes one input field of a route.
type field struct {
	name string
	kind fieldKind
}

func str(name string) field     { return field{name, kindString} }
func boolean(name string) field { return field{name, kindBool} }
func strList(name string) field { return field{name, kindStrings} }
func integer(name string) field { return field{name, kindInt} }

// errWrongType marks a value of the wrong JSON type.
var errWrongType = errors.New("wrong type")

// maxListItems bounds the items of a list field.
const maxListItems = 64

// input is a decoded body: the fields a route asked for.
type input struct {
	strs  map[string]string
	bools map[string]bool
	lists map[string][]string
	nums  map[string]int64
}

func (in input) str(name string) string    { return in.strs[name] }
func (in input) flag(name string) bool     { return in.bools[name] }
func (in input) list(name string) []string { return in.lists[name] }
func (in input) num(name string) int64     { return in.nums[name] }

// has reports whether an integer or list field was sent.
func (in input) has(name string) bool {
	_, n := in.nums[name]
	_, l := in.lists[name]
	return n || l
}

// badInput is a client error found while decoding: the condition's error
// with its English text, the catalog key of that text's variant ("" for
// the condition's own) and the field it names ("" for none).
func badInput(cond *Error, key, field, msg string) *Error {
	var vars map[string]string
	if field != "" {
		vars = map[string]string{"field": field}
	}
	return cond.with(msg, key, vars)
}

// decode reads and decodes r's body into the given fields. Unknown fields
// are ignored; a present field of the wrong type, a duplicated key, invalid
// UTF-8 or a control character is an error. Absent fields are left empty:
// routes say which ones they require.
func decode(r Request, limit int64, fields ...field) (input, error) {
	in := input{strs: map[string]string{}, bools: map[string]bool{}, lists: map[string][]string{}, nums: map[string]int64{}}
	body, err := r.Body(limit)
	if err != nil {
		if errors.Is(err, ErrBodyTooLarge) {
			return in, ErrBodyTooLarge
		}
		return in, badInput(ErrUnreadableBody, "", "", "Could not read request body")
	}
	if !utf8.Valid(body) {
		return in, badInput(ErrInvalidCharacters, "invalid_characters.body", "", "Request body must be valid UTF-8")
	}
	ct := r.Header("Content-Type")
	mt := ""
	if ct != "" {
		mt, _, err = mime.ParseMediaType(ct)
		if err != nil {
			return in, ErrUnsupportedContentType
		}
	}
	switch mt {
	case "", "application/json":
		if len(bytes.TrimSpace(body)) == 0 {
			return in, nil
		}
		err = decodeJSON(body, fields, &in)
	case "application/x-www-form-urlencoded":
		err = decodeForm(body, fields, &in)
	default:
		return in, ErrUnsupportedContentType
	}
	if err != nil {
		return in, err
	}
	for name, v := range in.strs {
		if !printable(v) {
			return in, badInput(ErrInvalidCharacters, "", name, name+" contains invalid characters")
		}
	}
	for name, vs := range in.lists {
		for _, v := range vs {
			if !printable(v) {
				return in, badInput(ErrInvalidCharacters, "", name, name+" contains invalid characters")
			}
		}
	}
	return in, nil
}

func lookup(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

func decodeJSON(body []byte, fields []field, in *input) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return badInput(ErrInvalidJSON, "", "", "Invalid JSON body")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return badInput(ErrInvalidJSON, "invalid_json.object", "", "Request body must be a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return badInput(ErrInvalidJSON, "", "", "Invalid JSON body")
		}
		key, ok := tok.(string)
		if !ok {
			return badInput(ErrInvalidJSON, "", "", "Invalid JSON body")
		}
		if seen[key] {
			return badInput(ErrDuplicateField, "", truncate(key), "Duplicate field: "+truncate(key))
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return badInput(ErrInvalidJSON, "", "", "Invalid JSON body")
		}
		f, ok := lookup(fields, key)
		if !ok {
			continue
		}
		switch f.kind {
		case kindString:
			var s string
			if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &s) != nil {
				return badInput(ErrWrongFieldType, "wrong_field_type.string", f.name, f.name+" must be a string")
			}
			in.strs[f.name] = s
		case kindBool:
			var b bool
			if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &b) != nil {
				return badInput(ErrWrongFieldType, "wrong_field_type.boolean", f.name, f.name+" must be a boolean")
			}
			in.bools[f.name] = b
		case kindStrings:
			var items []any
			if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &items) != nil || len(items) > maxListItems {
				return badInput(ErrWrongFieldType, "wrong_field_type.array", f.name, f.name+" must be an array of strings")
			}
			l := make([]string, len(items))
			for i, it := range items {
				var ok bool
				if l[i], ok = it.(string); !ok {
					return badInput(ErrWrongFieldType, "wrong_field_type.array", f.name, f.name+" must be an array of strings")
				}
			}
			in.lists[f.name] = l
		case kindInt:
			var n json.Number
			i, err := int64(0), error(nil)
			if raw[0] == '"' {
				err = errWrongType
			} else if err = json.Unmarshal(raw, &n); err == nil {
				i, err = n.Int64()
			}
			if err != nil {
				return badInput(ErrWrongFieldType, "wrong_field_type.integer", f.name, f.name+" must be an integer")
			}
			in.nums[f.name] = i
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return badInput(ErrInvalidJSON, "", "", "Invalid JSON body")
	}
	if _, err := dec.Token(); err != io.EOF { // nothing may follow the object
		return badInput(ErrInvalidJSON, "", "", "Invalid JSON body")
	}
	return nil
}

func decodeForm(body []byte, fields []field, in *input) error {
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return badInput(ErrInvalidForm, "", "", "Invalid form body")
	}
	for key, vs := range vals {
		if len(vs) > 1 {
			return badInput(ErrDuplicateField, "", truncate(key), "Duplicate field: "+truncate(key))
		}
		f, ok := lookup(fields, key)
		if !ok {
			continue
		}
		if !utf8.ValidString(vs[0]) {
			return badInput(ErrInvalidCharacters, "invalid_characters.body", "", "Request body must be valid UTF-8")
		}
		switch f.kind {
		case kindString:
			in.strs[f.name] = vs[0]
		case kindBool:
			switch strings.ToLower(vs[0]) {
			case "true", "on", "1", "yes":
				in.bools[f.name] = true
			case "false", "off", "0", "no", "":
				in.bools[f.name] = false
			default:
				return badInput(ErrWrongFieldType, "wrong_field_type.boolean", f.name, f.name+" must be a boolean")
			}
		case kindStrings:
			l := strings.FieldsFunc(vs[0], func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
			if len(l) > maxListItems {
				return badInput(ErrWrongFieldType, "wrong_field_type.array", f.name, f.name+" must be an array of strings")
			}
			in.lists[f.name] = l
		case kindInt:
			if vs[0] == "" {
				continue // an empty form field is an absent one
			}
			i, err := strconv.ParseInt(vs[0], 10, 64)
			if err != nil {
				return badInput(ErrWrongFieldType, "wrong_field_type.integer", f.name, f.name+" must be an integer")
			}
			in.nums[f.name] = i
		}
	}
	return nil
}

// printable reports whether s has no control characters (C0, DEL, C1) and
// no Unicode format characters that hide text (bidi overrides, zero-width).
func printable(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// truncate keeps client-supplied names short in error messages.
func truncate(s string) string {
	if len(s) <= 64 && printable(s) {
		return s
	}
	return "(invalid name)"
}

// foldEmail is the one form of an address that every lookup, limit key
// and stored record uses: trimmed, NFKC-normalised and lowercased. NFKC
// turns compatibility forms (full-width letters, the Kelvin sign U+212A,
// ligatures) into their plain letters, so that spellings a store's
// case- and width-insensitive collation would match as one account are
// one rate-limit key too, and one address can never be multiplied into
// many keys (SECURITY.md deviation 16).
func foldEmail(raw string) string {
	return norm.NFKC.String(strings.ToLower(norm.NFKC.String(strings.TrimSpace(raw))))
}

// normalizeEmail folds an address (foldEmail) and checks it is a plain
// addr-spec of at most 254 bytes.
func normalizeEmail(raw string) (string, error) {
	if len(raw) > 4*maxEmailBytes {
		return "", ErrEmailTooLong // before any normalisation works on it
	}
	e := foldEmail(raw)
	if e == "" {
		return "", ErrEmailRequired
	}
	if len(e) > maxEmailBytes {
		return "", ErrEmailTooLong
	}
	at := strings.LastIndexByte(e, '@')
	if at <= 0 || at == len(e)-1 || strings.ContainsAny(e, " \t\"<>()[],;:\\") {
		return "", ErrInvalidEmail
	}
	if a, err := mail.ParseAddress(e); err != nil || a.Address != e || a.Name != "" {
		return "", ErrInvalidEmail
	}
	domain := e[at+1:]
	if strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", ErrInvalidEmail
	}
	return e, nil
}

// text is one string input of a typed method, with the name its JSON field
// has, for the message.
type text struct{ name, value string }

// checkText refuses a string input that the body decoder would have
// refused: invalid UTF-8, control or invisible formatting characters. The
// typed methods check their own inputs, so an app that calls them from
// its own forms gets the same rule as the JSON routes (which have checked
// already; the second check costs a scan of a few bytes).
func checkText(in ...text) error {
	for _, t := range in {
		if !printable(t.value) {
			return badInput(ErrInvalidCharacters, "", t.name, t.name+" contains invalid characters")
		}
	}
	return nil
}

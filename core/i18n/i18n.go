// Package i18n holds authkit's translations: a catalog of languages, each
// a set of texts keyed by authkit's stable codes (the error codes of
// core/auth, its message keys, the mail kinds), and the language of a
// request chosen from its Accept-Language header.
//
// English is built in and is not in a catalog: its texts are the spec's,
// held by the code that answers (auth.Codes, mail.DefaultTemplates), and
// they are what every key falls back to. An app adds a language with a
// catalog file and opts in by giving the catalog to auth.Config.Catalog:
//
//	cat := i18n.New()
//	if err := cat.Add(i18n.German()); err != nil { ... }      // the shipped worked example
//	if err := cat.LoadFS(os.DirFS("locales"), "*.json"); err != nil { ... } // the app's own
//	svc, err := auth.New(auth.Config{..., Catalog: cat})
//
// Language matching (Accept-Language, with its q-values, regions and
// scripts) is golang.org/x/text/language's Matcher, and the plural forms of
// durations ("1 Stunde", "24 Stunden") are CLDR's rules from
// golang.org/x/text/feature/plural: nothing is matched by hand.
//
// # The catalog file
//
// One JSON object per language; "language" is a BCP 47 tag:
//
//	{
//	  "language": "de",
//	  "texts": {"invalid_credentials": "Ungültige Anmeldedaten", "wrong_field_type": "{field} hat den falschen Typ", ...},
//	  "mails": {"verify_email": {"subject": "...", "text": "...", "html": "..."}, ...},
//	  "units": {"hour": {"one": "{n} Stunde", "other": "{n} Stunden"}, "minute": {...}, "second": {...}, "day": {...}},
//	  "and": " und ",
//	  "dateLayout": "2. January 2006 um 15:04 MST",
//	  "months": ["Januar", "Februar", ...]
//	}
//
// Texts may use {field}, {min} and {max} where authkit's English text
// names a field or a bound. A key a language lacks falls back to English.
// Mails are mail.Template sources (text/template and html/template over
// mail.Data); a kind a language lacks is sent in English, whole.
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// Catalog is a set of languages beside the built-in English. It is safe for
// concurrent use; add languages before the Service that uses it serves.
type Catalog struct {
	mu      sync.RWMutex
	langs   map[language.Tag]*Language
	tags    []language.Tag // English first: the fallback of the matcher
	matcher language.Matcher
}

// New returns a catalog with English only.
func New() *Catalog {
	c := &Catalog{langs: map[language.Tag]*Language{}, tags: []language.Tag{language.English}}
	c.matcher = language.NewMatcher(c.tags)
	return c
}

// Language is one language's texts. See the package documentation for the
// file format.
type Language struct {
	// Lang is the BCP 47 tag, e.g. "de" or "pt-BR".
	Lang string `json:"language"`
	// Texts are keyed by error code or message key.
	Texts map[string]string `json:"texts"`
	// Mails are keyed by mail kind ("verify_email", "reset_password", ...).
	Mails map[string]Mail `json:"mails"`
	// Units word durations: "day", "hour", "minute" and "second", each by
	// CLDR plural form ("one", "other", ...), with {n} for the number.
	Units map[string]map[string]string `json:"units"`
	// And joins the last two parts of a duration (" und ").
	And string `json:"and"`
	// DateLayout is a Go time layout whose "January" is replaced by the
	// month's name from Months.
	DateLayout string `json:"dateLayout"`
	// Months are the twelve month names, January first.
	Months []string `json:"months"`

	tag language.Tag
}

// Mail is one mail's templates in a language (see mail.Template).
type Mail struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
}

// Tag returns the language's tag.
func (l *Language) Tag() language.Tag { return l.tag }

// Add adds a language to the catalog, or replaces the one with its tag. It
// checks the language: a valid tag other than English, complete mails, and
// units and months in the form the durations and dates need.
func (c *Catalog) Add(l Language) error {
	tag, err := language.Parse(l.Lang)
	if err != nil {
		return fmt.Errorf("i18n: language %q: %w", l.Lang, err)
	}
	if base, _ := tag.Base(); base.String() == "en" {
		return fmt.Errorf("i18n: %s: English is built in; change its texts with auth's and mail's own configuration", l.Lang)
	}
	for kind, m := range l.Mails {
		if m.Subject == "" || m.Text == "" || m.HTML == "" {
			return fmt.Errorf("i18n: %s: mail %q needs a subject, a text and an HTML part", l.Lang, kind)
		}
	}
	for unit, forms := range l.Units {
		if forms["other"] == "" {
			return fmt.Errorf("i18n: %s: unit %q has no \"other\" form", l.Lang, unit)
		}
	}
	if l.DateLayout != "" && len(l.Months) != 12 {
		return fmt.Errorf("i18n: %s: dateLayout needs the twelve month names, got %d", l.Lang, len(l.Months))
	}
	l.tag = tag
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.langs[tag]; !ok {
		c.tags = append(c.tags, tag)
	}
	c.langs[tag] = &l
	c.matcher = language.NewMatcher(c.tags)
	return nil
}

// LoadJSON adds the language of one catalog file.
func (c *Catalog) LoadJSON(r io.Reader) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var l Language
	if err := dec.Decode(&l); err != nil {
		return fmt.Errorf("i18n: catalog file: %w", err)
	}
	return c.Add(l)
}

// LoadFS adds the language of every file of fsys matching pattern (fs.Glob).
func (c *Catalog) LoadFS(fsys fs.FS, pattern string) error {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return fmt.Errorf("i18n: %w", err)
	}
	for _, name := range names {
		f, err := fsys.Open(name)
		if err != nil {
			return fmt.Errorf("i18n: %w", err)
		}
		err = c.LoadJSON(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Match returns the language an Accept-Language header asks for among the
// catalog's, or nil for English (the header's first choice English, no
// header, or none of the catalog's languages acceptable).
func (c *Catalog) Match(acceptLanguage string) *Language {
	if c == nil || acceptLanguage == "" {
		return nil
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, i, conf := c.matcher.Match(tags...)
	if conf == language.No || i == 0 {
		return nil
	}
	return c.langs[c.tags[i]]
}

// Languages returns the catalog's languages, in the order they were added.
func (c *Catalog) Languages() []*Language {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Language, 0, len(c.tags)-1)
	for _, t := range c.tags[1:] {
		out = append(out, c.langs[t])
	}
	return out
}

// Lookup returns the language with tag, or nil.
func (c *Catalog) Lookup(tag language.Tag) *Language {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.langs[tag]
}

// Text returns the language's text for key with vars filled in
// ({field}, {min}, ...), or "" when the language has none (nil: English).
func (l *Language) Text(key string, vars map[string]string) string {
	if l == nil {
		return ""
	}
	t := l.Texts[key]
	for k, v := range vars {
		t = strings.ReplaceAll(t, "{"+k+"}", v)
	}
	return t
}

// Mail returns the language's templates for a mail kind, and whether it
// has them.
func (l *Language) Mail(kind string) (Mail, bool) {
	if l == nil {
		return Mail{}, false
	}
	m, ok := l.Mails[kind]
	return m, ok
}

// Duration words d in the language, as mail.Data.ExpiryText does in English:
// whole days from 48 hours on, else hours, minutes and seconds; "" below a
// second, or when the language has no units.
func (l *Language) Duration(d time.Duration) string {
	d = d.Truncate(time.Second)
	if l == nil || d <= 0 || len(l.Units) == 0 {
		return ""
	}
	if d >= 48*time.Hour && d%(24*time.Hour) == 0 {
		return l.count(int64(d/(24*time.Hour)), "day")
	}
	var parts []string
	for _, u := range []struct {
		n    int64
		name string
	}{{int64(d / time.Hour), "hour"}, {int64(d % time.Hour / time.Minute), "minute"}, {int64(d % time.Minute / time.Second), "second"}} {
		if u.n > 0 {
			parts = append(parts, l.count(u.n, u.name))
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + l.And + parts[len(parts)-1]
}

// count words n units in the plural form CLDR gives the language for n.
func (l *Language) count(n int64, unit string) string {
	forms := l.Units[unit]
	var form string
	switch plural.Cardinal.MatchPlural(l.tag, int(n%10_000_000), 0, 0, 0, 0) {
	case plural.Zero:
		form = forms["zero"]
	case plural.One:
		form = forms["one"]
	case plural.Two:
		form = forms["two"]
	case plural.Few:
		form = forms["few"]
	case plural.Many:
		form = forms["many"]
	}
	if form == "" {
		form = forms["other"]
	}
	return strings.ReplaceAll(form, "{n}", strconv.FormatInt(n, 10))
}

// Time words t with the language's layout and month names, or "" when it
// has none (or t is zero).
func (l *Language) Time(t time.Time) string {
	if l == nil || t.IsZero() || l.DateLayout == "" {
		return ""
	}
	s := t.Format(strings.ReplaceAll(l.DateLayout, "January", "\x00"))
	return strings.ReplaceAll(s, "\x00", l.Months[t.Month()-1])
}

//go:embed locales/*.json
var locales embed.FS

// German returns the German catalog authkit ships as the worked example of
// a catalog file (locales/de.json): every error, message and mail.
func German() Language {
	f, err := locales.Open("locales/de.json")
	if err != nil {
		panic("i18n: the embedded German catalog is missing: " + err.Error())
	}
	defer f.Close()
	var l Language
	if err := json.NewDecoder(f).Decode(&l); err != nil {
		panic("i18n: the embedded German catalog does not decode: " + err.Error())
	}
	return l
}

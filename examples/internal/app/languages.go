package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/authkit-go/authkit/core/i18n"
)

// shippedLanguages are the catalogs authkit ships besides English, which
// is built in: the JSON answers, the mails and the pages in each.
var shippedLanguages = map[string]func() i18n.Language{"de": i18n.German}

// catalog is the i18n catalog of LANGUAGES: a comma-separated list of the
// languages the server answers in besides English, chosen per request by
// Accept-Language. Unset: every shipped one ("de"); "en": English only.
// It returns the catalog and its description for the start-up log.
func catalog(setting string) (*i18n.Catalog, string, error) {
	if strings.TrimSpace(setting) == "" {
		setting = "de"
	}
	cat, names := i18n.New(), []string{"en"}
	for _, name := range SplitList(setting) {
		name = strings.ToLower(name)
		if slices.Contains(names, name) {
			continue
		}
		lang, ok := shippedLanguages[name]
		if !ok {
			return nil, "", fmt.Errorf("LANGUAGES: %q is not a language authkit ships (en, de)", name)
		}
		if err := cat.Add(lang()); err != nil {
			return nil, "", fmt.Errorf("LANGUAGES: %s: %w", name, err)
		}
		names = append(names, name)
	}
	return cat, strings.Join(names, ", "), nil
}

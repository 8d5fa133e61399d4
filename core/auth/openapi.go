package auth

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/authkit-go/authkit/core/session"
)

// openAPIJSON is the OpenAPI 3.1 document of every JSON route of routes,
// written by openapi_gen_test.go (go test ./auth -run
// TestOpenAPIDocumentUpToDate -update) and checked against every answer of
// the flow suite by the e2e module's openapi package.
//
//go:embed openapi.json
var openAPIJSON []byte

// openAPIDoc is a document's top level, in the order people read it.
type openAPIDoc struct {
	OpenAPI    string         `json:"openapi"`
	Info       map[string]any `json:"info"`
	Paths      map[string]any `json:"paths"`
	Components map[string]any `json:"components"`
}

// OpenAPI returns the OpenAPI 3.1 document (JSON) of the routes this
// Service registers: a route of a switched-off feature (Config.Disable) or
// of a store the Service lacks (Config.Sessions, Config.TrustedDevices,
// Config.EmailCode) is not in it, as [Service.Routes] leaves it out; the
// session cookie is named as Config.SessionCookie names it. Each operation
// lists in x-set-cookies the cookies its answers may set or expire, and
// for each status the codes the route answers with (an enum on code, each
// code an example with its English text); every answer may carry
// Content-Language and Vary (with Config.Catalog), and every operation
// takes Accept-Language.
//
// parts are the documents of modules mounted beside the routes (the
// passkeys module's Handler.OpenAPI passes its own): their paths, and the
// components core's document does not have, are added. A part's
// references may name core's components: "#/components/responses/Error400"
// (every authkit code of a status, and an app's own), the headers, the
// Accept-Language parameter, the security schemes.
// It returns an error only for a part that is not an OpenAPI document in
// JSON, or one that repeats a path of core's.
func (s *Service) OpenAPI(parts ...[]byte) ([]byte, error) {
	var doc openAPIDoc
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		return nil, fmt.Errorf("auth: openapi.json: %w", err)
	}
	keep := map[string]map[string]bool{}
	for _, rt := range s.Routes() {
		if keep[rt.Pattern] == nil {
			keep[rt.Pattern] = map[string]bool{}
		}
		keep[rt.Pattern][strings.ToLower(rt.Method)] = true
	}
	paths := doc.Paths
	for p, item := range paths {
		ops := item.(map[string]any)
		for m := range ops {
			if !keep[p][m] {
				delete(ops, m)
			}
		}
		if len(ops) == 0 {
			delete(paths, p)
		}
	}
	name := s.sessions.CookieName()
	comps := doc.Components
	schemes := comps["securitySchemes"].(map[string]any)
	schemes["session"].(map[string]any)["name"] = name
	for i, part := range parts {
		var pd struct {
			Paths      map[string]any            `json:"paths"`
			Components map[string]map[string]any `json:"components"`
		}
		if err := json.Unmarshal(part, &pd); err != nil {
			return nil, fmt.Errorf("auth: OpenAPI part %d: %w", i, err)
		}
		for p, item := range pd.Paths {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("auth: OpenAPI part %d: path %s is core's", i, p)
			}
			paths[p] = item
		}
		for kind, named := range pd.Components {
			have, _ := comps[kind].(map[string]any)
			if have == nil {
				have = map[string]any{}
				comps[kind] = have
			}
			for n, c := range named {
				if _, ok := have[n]; !ok {
					have[n] = c
				}
			}
		}
	}
	// The session cookie under its configured name in each operation's
	// x-set-cookies, the parts' included.
	for _, item := range paths {
		ops, _ := item.(map[string]any) // a part's may be anything
		for _, op := range ops {
			o, _ := op.(map[string]any)
			set, _ := o["x-set-cookies"].([]any)
			for i, c := range set {
				if c == session.DefaultCookieName {
					set[i] = name
				}
			}
		}
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

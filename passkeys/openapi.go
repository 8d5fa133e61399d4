package passkeys

import (
	_ "embed"
)

// openAPIPart is the OpenAPI 3.1 document of the JSON routes under Prefix
// (not the script): a part of core's document, whose responses and
// headers it names ("#/components/responses/Error400"), so it is served
// merged into core's by Handler.OpenAPI. The e2e module's openapi package
// checks every answer of the passkey flow suite against the merged
// document.
//
//go:embed openapi.json
var openAPIPart []byte

// OpenAPI returns the OpenAPI 3.1 document (JSON) of the Service's routes
// (auth.Service.OpenAPI: only the routes it registers) with this handler's
// JSON routes added: what an app serving both publishes at, for example,
// GET /api/openapi.json.
func (h *Handler) OpenAPI() ([]byte, error) {
	return h.svc.OpenAPI(openAPIPart)
}

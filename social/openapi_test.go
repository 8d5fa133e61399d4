package social_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/social"
)

// The form_post callback is in the OpenAPI document as a POST that takes
// a form and answers 303, without the 403 cross_origin_blocked of the
// other state-changing routes (it takes posts from other sites).
func TestOpenAPIFormPostCallback(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}))
	prov, err := social.NewOIDC(social.OIDCConfig{Issuer: "https://idp.example", ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := social.New(svc, social.Config{AppURL: "https://app.example", Providers: []social.ProviderConfig{{Name: "idp", Provider: prov}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	raw, err := svc.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			RequestBody map[string]json.RawMessage `json:"requestBody"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	post, ok := doc.Paths[social.Prefix+"/{provider}/callback"]["post"]
	if !ok || post.OperationID != "socialFormPostCallback" || post.RequestBody == nil {
		t.Fatalf("POST callback: %+v (present %v)", post, ok)
	}
	var statuses []string
	for s := range post.Responses {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	if !slices.Contains(statuses, "303") || slices.Contains(statuses, "403") {
		t.Fatalf("POST callback answers %v, want 303 and no 403", statuses)
	}
	if _, ok := doc.Paths[social.Prefix+"/{provider}/link"]["post"].Responses["403"]; !ok {
		t.Fatal("the link route lost its 403")
	}
}

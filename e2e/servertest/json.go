package servertest

import (
	"encoding/json"
	"testing"
)

// JSON returns v encoded as JSON, for a request body (a passkey
// authenticator's response, say); it fails t when v does not encode.
func JSON(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

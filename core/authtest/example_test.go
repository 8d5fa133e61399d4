package authtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/user"
)

// This example runs the suite for a new framework: the module only
// translates its request type into auth.Request and writes auth.Response
// back. Here the "framework" is plain net/http.

// newUserStore is the user store under test, e.g. store.NewMemory.
var newUserStore func() user.Store

var harness = authtest.Harness{
	Start: func(t *testing.T, svc *auth.Service) string {
		mux := http.NewServeMux()
		for _, rt := range svc.Modules().Routes() {
			mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
				resp := svc.Modules().Handle(rt, request{r})
				resp.Write(w)
			})
		}
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	},
	NewUsers: func(t *testing.T) user.Store { return newUserStore() },
}

// request is the framework's request as auth.Request.
type request struct{ r *http.Request }

func (q request) Context() context.Context     { return q.r.Context() }
func (q request) Method() string               { return q.r.Method }
func (q request) Host() string                 { return q.r.Host }
func (q request) PathValue(name string) string { return q.r.PathValue(name) }
func (q request) RemoteAddr() string           { return q.r.RemoteAddr }
func (q request) Header(name string) string    { return strings.Join(q.r.Header.Values(name), ", ") }

func (q request) Cookie(name string) (string, bool) {
	c, err := q.r.Cookie(name)
	if err != nil {
		return "", false
	}
	return c.Value, true
}

func (q request) Body(limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(q.r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("example: %w", auth.ErrBodyTooLarge)
	}
	return b, nil
}

func Example() {
	// In the framework module's test file:
	//
	//	func TestFlows(t *testing.T) { authtest.Run(t, harness) }
	_ = harness
}

package otelauth_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/otelauth"
)

// BenchmarkLoginRoute: a failed login (unknown address) through Handle,
// without an observer and with otelauth on the SDK (a manual reader, every
// span sampled and dropped), for the cost of recording: one flow span,
// one store span, one span event, two counters and a histogram point.
func BenchmarkLoginRoute(b *testing.B) {
	obs, err := otelauth.New(otelauth.Config{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		obs  auth.Observer
	}{{"none", nil}, {"otelauth", obs}} {
		b.Run(c.name, func(b *testing.B) {
			key, _ := secretbox.GenerateKey()
			keys, _ := secretbox.ParseKeyring(key)
			svc, err := auth.New(auth.Config{
				Users: store.NewMemory(store.MemoryConfig{}), Secrets: []string{strings.Repeat("s", 32)}, Keys: keys,
				AppURL: "http://app.test", Hasher: password.ForTesting(), Logger: slog.New(slog.DiscardHandler),
				Audit: func(context.Context, auth.Event) {}, Observer: c.obs,
				Limits:     auth.Limits{LoginIP: auth.Off, LoginEmail: auth.Off},
				LimitStore: func(string) ratelimit.Store { return nil },
			})
			if err != nil {
				b.Fatal(err)
			}
			defer svc.Close(context.Background())
			var login auth.Route
			for _, rt := range svc.Modules().Routes() {
				if rt.Pattern == "/api/login" {
					login = rt
				}
			}
			body := `{"email":"nobody@example.com","password":"wrong horse battery"}`
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "/api/login", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				if resp := svc.Modules().Handle(login, auth.HTTPRequest(r, nil)); resp.Status != 401 {
					b.Fatalf("status %d", resp.Status)
				}
			}
		})
	}
}

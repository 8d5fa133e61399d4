package otelauth_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/otelauth"
)

// An app passes its meter provider (here the SDK's with a manual reader;
// in production one with a Prometheus or OTLP exporter) and sets the
// Observer and its mailer wrapper in auth.Config.
func Example() {
	reader := sdkmetric.NewManualReader()
	obs, err := otelauth.New(otelauth.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		panic(err)
	}
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:    store.NewMemory(store.MemoryConfig{}),
		Secrets:  []string{strings.Repeat("s", 32)},
		Keys:     keys,
		AppURL:   "https://app.example.com",
		Hasher:   password.ForTesting(),
		Logger:   slog.New(slog.DiscardHandler),
		Mailer:   obs.Mailer(&mail.Capture{}),
		Observer: obs,
	})
	if err != nil {
		panic(err)
	}
	defer svc.Close(context.Background())

	ctx := context.Background()
	_, err = svc.Login(ctx, svc.Visit(auth.HTTPRequest(httptest.NewRequest("POST", "/api/login", nil), nil)), auth.LoginInput{Email: "nobody@example.com", Password: "not this one"})
	fmt.Println(err)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == otelauth.MetricLogins {
			p := m.Data.(metricdata.Sum[int64]).DataPoints[0]
			v, _ := p.Attributes.Value(otelauth.AttrOutcome)
			fmt.Println(m.Name, v.AsString(), p.Value)
		}
	}
	// Output:
	// Invalid credentials
	// authkit.logins failure 1
}

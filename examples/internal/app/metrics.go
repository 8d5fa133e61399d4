package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/authkit-go/authkit/otelauth"
)

// metrics makes the Prometheus metrics of METRICS_ADDR: the OpenTelemetry
// Prometheus exporter on a registry of its own (not the process-global
// one, so two Apps in one test process do not collide), an SDK meter
// provider reading through it, and the otelauth Observer on that
// provider. It sets a.MetricsAddr and a.Metrics (GET /metrics) and returns
// the observer; nil when addr is empty (the default: no OpenTelemetry
// work at all).
func (a *App) metrics(addr string) (*otelauth.Observer, error) {
	if addr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	obs, err := otelauth.New(otelauth.Config{MeterProvider: mp})
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	a.closers = append(a.closers, func(ctx context.Context) error { return mp.Shutdown(ctx) })
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	a.MetricsAddr, a.Metrics = addr, mux
	return obs, nil
}

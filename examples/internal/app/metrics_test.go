package app

import "testing"

// TestMetricsOff: without METRICS_ADDR there is no metrics handler and no
// observer. The other side, METRICS_ADDR set, is e2e/servers'
// TestMetricsAddr: it runs the built example with it and checks the scrape
// of its own address after the same scripted run, series by series.
func TestMetricsOff(t *testing.T) {
	a := loadOrRefuse(t, map[string]string{"DATABASE_URL": "memory", "AUTHKIT_DATA_DIR": t.TempDir()}, "")
	defer a.Close(t.Context())
	if a.Metrics != nil || a.MetricsAddr != "" {
		t.Errorf("metrics on without METRICS_ADDR: %q", a.MetricsAddr)
	}
}

// Package otelauth records what authkit does as OpenTelemetry metrics and
// traces: an [Observer] for auth.Config.Observer, and a mail.Mailer
// wrapper ([Observer.Mailer]) that counts mails.
//
// It depends on the OpenTelemetry API only (otel, otel/metric, otel/trace):
// the app brings the SDK and an exporter (Prometheus, OTLP), and an app
// that does not use OpenTelemetry does not import this module, so it
// downloads none of it.
//
//	obs, err := otelauth.New(otelauth.Config{MeterProvider: mp, TracerProvider: tp})
//	if err != nil { ... }
//	svc, err := auth.New(auth.Config{
//		Users:    users,
//		Mailer:   obs.Mailer(smtpMailer),
//		Observer: obs,
//		...
//	})
//
// What it records (names and attributes in the README): logins by outcome,
// second-factor verifications by method and outcome, rate-limit hits by
// limit name, mails by kind and outcome, user-store errors by part and
// operation, the duration of each flow by flow and outcome; a span around
// each flow (one JSON route) with a child span per user-store call and a
// span event per security event.
//
// Never recorded: passwords, codes, tokens, secrets, email addresses,
// client addresses, error texts, or an event's free-text Detail. User ids
// appear only on span events, only with Config.UserIDs.
package otelauth

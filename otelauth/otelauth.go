package otelauth

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
)

// ScopeName is the instrumentation scope of every meter and tracer the
// Observer uses: the module path, as OpenTelemetry's contrib modules name
// theirs.
const ScopeName = "github.com/authkit-go/authkit/otelauth"

// The metric names (see the README for their attributes).
const (
	MetricLogins       = "authkit.logins"
	MetricTwoFactor    = "authkit.2fa.verifications"
	MetricLimitHits    = "authkit.limit.hits"
	MetricMails        = "authkit.mails"
	MetricStoreErrors  = "authkit.store.errors"
	MetricFlowDuration = "authkit.flow.duration"
)

// The attribute keys of authkit's own; the others are OpenTelemetry
// semantic conventions (http.route, http.request.method,
// http.response.status_code, db.operation.name, error.type, enduser.id).
const (
	AttrOutcome   = attribute.Key("authkit.outcome")    // success, failure, pending_2fa, error; sent, failed
	AttrFlow      = attribute.Key("authkit.flow")       // auth.Flow.Name: "login", "2fa/verify"
	AttrMethod    = attribute.Key("authkit.2fa.method") // totp, recovery_code, passkey, email_code
	AttrLimit     = attribute.Key("authkit.limit.name") // "login:ip", "login:email", ...
	AttrMailKind  = attribute.Key("authkit.mail.kind")  // mail.Kind: "verify", "reset", ...
	AttrStorePart = attribute.Key("authkit.store.part") // "Accounts", "TwoFactor", ..., "Limits", "Sessions", "TrustedDevices", "Challenges"
	AttrEvent     = attribute.Key("authkit.event")      // the auth.EventType of a span event
)

// Semantic-convention keys, written out so that the module needs no
// semconv package version.
const (
	keyRoute      = attribute.Key("http.route")
	keyHTTPMethod = attribute.Key("http.request.method")
	keyStatus     = attribute.Key("http.response.status_code")
	keyDBOp       = attribute.Key("db.operation.name")
	keyErrorType  = attribute.Key("error.type")
	keyUserID     = attribute.Key("enduser.id")
)

// Config configures an Observer. The zero value records to the global
// providers (otel.GetMeterProvider, otel.GetTracerProvider).
type Config struct {
	// MeterProvider makes the meter. Default: otel.GetMeterProvider().
	MeterProvider metric.MeterProvider

	// TracerProvider makes the tracer. Default: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider

	// UserIDs puts the account id on the span events of security events
	// (enduser.id). authkit's ids are random and carry nothing of the
	// person, but they tie a trace to an account: turn this on only where
	// traces are kept like the audit log. Never on metrics. Default: false.
	UserIDs bool
}

// Observer records what an auth.Service does as OpenTelemetry metrics and
// spans. Set it as auth.Config.Observer; wrap the app's mail.Mailer with
// [Observer.Mailer] to count mails. It is safe for concurrent use.
type Observer struct {
	tracer  trace.Tracer
	userIDs bool

	logins      metric.Int64Counter
	twoFactor   metric.Int64Counter
	limits      metric.Int64Counter
	mails       metric.Int64Counter
	storeErrors metric.Int64Counter
	flows       metric.Float64Histogram
}

var _ auth.Observer = (*Observer)(nil)

// New returns an Observer with its instruments made on cfg's meter. It
// fails only when the meter refuses an instrument.
func New(cfg Config) (*Observer, error) {
	mp, tp := cfg.MeterProvider, cfg.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	m := mp.Meter(ScopeName)
	o := &Observer{tracer: tp.Tracer(ScopeName), userIDs: cfg.UserIDs}
	var err error
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		if err == nil {
			*dst, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		}
	}
	counter(&o.logins, MetricLogins, "{login}", "Login attempts by outcome: success, pending_2fa (the password was right, a second factor is due), failure.")
	counter(&o.twoFactor, MetricTwoFactor, "{verification}", "Second-factor verifications by method and outcome.")
	counter(&o.limits, MetricLimitHits, "{hit}", "Requests refused by a rate limit, by the limit's name.")
	counter(&o.mails, MetricMails, "{mail}", "Mail delivery attempts by kind and outcome (sent, failed); a retried mail counts each attempt.")
	counter(&o.storeErrors, MetricStoreErrors, "{error}", "Store calls that failed, by store part and operation; not-found, conflicts and a full limit store are outcomes, not errors.")
	if err == nil {
		o.flows, err = m.Float64Histogram(MetricFlowDuration, metric.WithUnit("s"),
			metric.WithDescription("Duration of authkit's flows (a JSON route, or its typed method called directly), by flow and outcome."),
			metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// StartFlow starts the flow's span ("authkit " + the flow's name, with
// http.route and http.request.method when a JSON route runs it, not when
// an app or a module called its typed method) and, when the flow ends,
// records its duration under its outcome: success (a status below 400),
// failure (4xx: the client's mistake or a refusal) or error (5xx, and the
// span's status is Error).
func (o *Observer) StartFlow(ctx context.Context, f auth.Flow) (context.Context, func(status int)) {
	start := time.Now()
	flow := f.Name
	attrs := []attribute.KeyValue{AttrFlow.String(flow)}
	if f.Route.Pattern != "" {
		attrs = append(attrs, keyRoute.String(f.Route.Pattern), keyHTTPMethod.String(f.Route.Method))
	}
	ctx, span := o.tracer.Start(ctx, "authkit "+flow, trace.WithAttributes(attrs...))
	return ctx, func(status int) {
		outcome := "success"
		switch {
		case status >= 500:
			outcome = "error"
			span.SetStatus(codes.Error, "")
		case status >= 400:
			outcome = "failure"
		}
		span.SetAttributes(keyStatus.Int(status), AttrOutcome.String(outcome))
		span.End()
		o.flows.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(AttrFlow.String(flow), AttrOutcome.String(outcome)))
	}
}

// StartStoreCall starts the store call's span ("authkit.store " +
// part.op) and counts the call in authkit.store.errors when it fails. An
// expected outcome (user.ErrNotFound, user.ErrConflict,
// user.ErrEmailTaken, onetime.ErrNotFound: a challenge replayed or
// expired, ratelimit.ErrStoreFull: reported as its own event) is no
// error. The error's text is never recorded (a
// driver's message can quote the values of a row): error.type is
// "unavailable" for user.ErrUnavailable, "other" otherwise.
func (o *Observer) StartStoreCall(ctx context.Context, part, op string) (context.Context, func(err error)) {
	ctx, span := o.tracer.Start(ctx, "authkit.store "+part+"."+op, trace.WithAttributes(
		AttrStorePart.String(part), keyDBOp.String(op)))
	return ctx, func(err error) {
		if err != nil && !expected(err) {
			typ := "other"
			if errors.Is(err, user.ErrUnavailable) {
				typ = "unavailable"
			}
			span.SetStatus(codes.Error, "")
			span.SetAttributes(keyErrorType.String(typ))
			o.storeErrors.Add(ctx, 1, metric.WithAttributes(AttrStorePart.String(part), keyDBOp.String(op), keyErrorType.String(typ)))
		}
		span.End()
	}
}

func expected(err error) bool {
	return errors.Is(err, user.ErrNotFound) || errors.Is(err, user.ErrConflict) || errors.Is(err, user.ErrEmailTaken) ||
		errors.Is(err, onetime.ErrNotFound) || errors.Is(err, ratelimit.ErrStoreFull)
}

// Event counts logins, second-factor verifications and limit hits, and
// adds the event to the current span as a span event named for its type
// (attributes: authkit.event, the 2FA method, the limit's name, and
// enduser.id with Config.UserIDs). The address, the client address and
// Detail's free text are never recorded.
func (o *Observer) Event(ctx context.Context, e auth.Event) {
	attrs := []attribute.KeyValue{AttrEvent.String(string(e.Type))}
	switch e.Type {
	case auth.EventLoginSucceeded, auth.EventRecoveryCodeUsed:
		o.logins.Add(ctx, 1, metric.WithAttributes(AttrOutcome.String("success")))
		if e.Factor != "" {
			o.twoFactor.Add(ctx, 1, metric.WithAttributes(AttrMethod.String(string(e.Factor)), AttrOutcome.String("success")))
		}
	case auth.EventLoginPending:
		o.logins.Add(ctx, 1, metric.WithAttributes(AttrOutcome.String("pending_2fa")))
	case auth.EventLoginFailed:
		o.logins.Add(ctx, 1, metric.WithAttributes(AttrOutcome.String("failure")))
	case auth.EventTwoFactorFailed:
		if e.Factor != "" {
			o.twoFactor.Add(ctx, 1, metric.WithAttributes(AttrMethod.String(string(e.Factor)), AttrOutcome.String("failure")))
		}
	case auth.EventRateLimited:
		o.limits.Add(ctx, 1, metric.WithAttributes(AttrLimit.String(e.Detail)))
		attrs = append(attrs, AttrLimit.String(e.Detail))
	}
	if e.Factor != "" {
		attrs = append(attrs, AttrMethod.String(string(e.Factor)))
	}
	if o.userIDs && e.UserID != "" {
		attrs = append(attrs, keyUserID.String(e.UserID))
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("authkit."+string(e.Type), trace.WithAttributes(attrs...))
	}
}

// Mailer wraps m so that every delivery attempt is counted in
// authkit.mails by kind and outcome. Set the result as auth.Config.Mailer.
func (o *Observer) Mailer(m mail.Mailer) mail.Mailer { return observedMailer{m, o} }

type observedMailer struct {
	m mail.Mailer
	o *Observer
}

// Send sends msg with the wrapped mailer and counts the attempt.
func (w observedMailer) Send(ctx context.Context, msg mail.Message) error {
	err := w.m.Send(ctx, msg)
	outcome := "sent"
	if err != nil {
		outcome = "failed"
	}
	w.o.mails.Add(ctx, 1, metric.WithAttributes(AttrMailKind.String(string(msg.Kind)), AttrOutcome.String(outcome)))
	return err
}

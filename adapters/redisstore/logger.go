package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Logger routes go-redis's own log lines (a pool that cannot dial, a
// connection dropped by a hook, ...) to a [slog.Logger], so that they come
// out in the application's structured format instead of as go-redis's
// unstructured "redis: ..." lines on standard error. go-redis has one
// logger for the whole process; set it once, at startup:
//
//	redis.SetLogger(redisstore.NewLogger(logger))
//
// Each line is logged at [slog.LevelWarn] (go-redis logs only what went
// wrong, at its default level) with the message as go-redis wrote it, less
// its "redis: " prefix, and the attribute component=go-redis.
type Logger struct {
	l *slog.Logger
}

// NewLogger returns a Logger that writes to l, or to [slog.Default] when l
// is nil.
func NewLogger(l *slog.Logger) *Logger {
	if l == nil {
		l = slog.Default()
	}
	return &Logger{l: l}
}

// Printf implements go-redis's logging interface (redis.SetLogger).
func (g *Logger) Printf(ctx context.Context, format string, v ...any) {
	if ctx == nil {
		ctx = context.Background()
	}
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	g.l.Log(ctx, slog.LevelWarn, strings.TrimPrefix(msg, "redis: "), "component", "go-redis")
}

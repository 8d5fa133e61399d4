package app

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// The variables that name the Redis of the rate limits, one per kind of
// deployment; at most one may be set.
const (
	redisURLVar         = "REDIS_URL"          // one node: redis.ParseURL
	redisClusterURLVar  = "REDIS_CLUSTER_URL"  // a Cluster: redis.ParseClusterURL
	redisSentinelURLVar = "REDIS_SENTINEL_URL" // sentinels: redis.ParseFailoverURL
)

// redisSource is the Redis that one of the variables names: the variable,
// a description for the start-up log (never a password) and the client.
type redisSource struct {
	variable string
	desc     string
	client   func() redis.UniversalClient
}

// Fail fast when Redis is down: one retry, one dial attempt, short
// timeouts. Requests then get their 503 (fail closed) at once instead of
// piling up.
const (
	redisDialTimeout = 5 * time.Second
	redisIOTimeout   = 3 * time.Second
)

// parseRedis reads REDIS_URL, REDIS_CLUSTER_URL and REDIS_SENTINEL_URL
// with go-redis's parsers of its URL forms. It returns nil when none is
// set, and an error naming the variable, and never the password the URL
// may hold, when one is malformed or more than one is set.
func parseRedis(env Env) (*redisSource, error) {
	var set []string
	for _, k := range []string{redisURLVar, redisClusterURLVar, redisSentinelURLVar} {
		if env.Get(k, "") != "" {
			set = append(set, k)
		}
	}
	switch len(set) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%s are set together: set one of them (REDIS_URL: one node, REDIS_CLUSTER_URL: a Cluster, REDIS_SENTINEL_URL: its sentinels)", strings.Join(set, " and "))
	}
	k := set[0]
	raw := env.Get(k, "")
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid URL", k) // url's error repeats the URL, password and all
	}
	// go-redis's errors name a part of the URL (a scheme, an option, a
	// database number), never the password.
	invalid := func(err error) error { return fmt.Errorf("%s: %s", k, strings.TrimPrefix(err.Error(), "redis: ")) }
	switch k {
	case redisClusterURLVar:
		opts, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, invalid(err)
		}
		// go-redis ignores the path of a Cluster's URL.
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return nil, fmt.Errorf("%s: a Cluster has one database, 0: drop /%s from the URL", k, p)
		}
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
		opts.MaxRetries, opts.DialerRetries = 1, 1
		return &redisSource{k, "redis cluster " + strings.Join(opts.Addrs, ","),
			func() redis.UniversalClient { return redis.NewClusterClient(opts) }}, nil
	case redisSentinelURLVar:
		opts, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, invalid(err)
		}
		if opts.MasterName == "" {
			return nil, fmt.Errorf("%s: no master_name: add ?master_name=<the name the sentinels monitor>", k)
		}
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
		opts.MaxRetries, opts.DialerRetries = 1, 1
		return &redisSource{k, "redis sentinel " + opts.MasterName + " via " + strings.Join(opts.SentinelAddrs, ","),
			func() redis.UniversalClient { return redis.NewFailoverClient(opts) }}, nil
	default:
		opts, err := redis.ParseURL(raw)
		if err != nil {
			return nil, invalid(err)
		}
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
		opts.MaxRetries, opts.DialerRetries = 1, 1
		return &redisSource{k, "redis " + opts.Addr, func() redis.UniversalClient { return redis.NewClient(opts) }}, nil
	}
}

// openLimits returns the rate-limit store of every limit: Redis when one
// of REDIS_URL, REDIS_CLUSTER_URL and REDIS_SENTINEL_URL is set (shared by
// every server process), else nil, which gives each limit its own
// in-memory store.
func (a *App) openLimits(src *redisSource, prefix string) (func(string) ratelimit.Store, string, error) {
	if src == nil {
		return nil, "memory", nil
	}
	// go-redis logs its own troubles ("connection pool: failed to dial")
	// through one process-wide logger: make it the app's.
	redis.SetLogger(redisstore.NewLogger(a.logger))
	client := src.client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, "", fmt.Errorf("%s: %s does not answer: %w", src.variable, strings.TrimPrefix(src.desc, "redis "), err)
	}
	a.closers = append(a.closers, func(context.Context) error { return client.Close() })
	a.redis = client
	rs := redisstore.New(client, redisstore.Config{Prefix: prefix})
	a.pingLimits = rs.Ping
	// One store for every limit: their keys carry the limit's name.
	return func(string) ratelimit.Store { return rs }, src.desc, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/ratelimit"
)

var limitsCmd = &command{
	name:    "limits",
	usage:   "reset [--key PREFIX] [--database-url URL] [--table-prefix PREFIX] [--redis-url URL] [--redis-prefix PREFIX]",
	summary: "clear rate-limit counters kept in SQL or Redis (development, tests)",
	help: `Clears the rate-limit counters whose key starts with --key (all of them
without it) in every shared store it is given, and prints how many it
cleared in each (ratelimit.Clearer). Counters in memory die with their
process; those in SQL or Redis outlive restarts, so a script that registers
the same address on every run meets the registration limit (3 an hour per
client address) on its fourth run. Reset between runs:

	authkit limits reset --key register:ip:

The stores: the SQL table of sqlxstore (--database-url, else DATABASE_URL,
with --table-prefix) and Redis (--redis-url, else REDIS_URL, REDIS_CLUSTER_URL
or REDIS_SENTINEL_URL, the example servers' variables, with --redis-prefix,
else REDIS_PREFIX, default "authkit:rl:"). A database without the table
(not migrated, or migrated with sqlxstore.Config.NoLimitsTable) is skipped.

Keys are <limit>:<part>: login:ip:<address>, login:email:<address>,
register:ip:<address>, reset:ip:, reset:email:, resend:<user id>,
2fa:<user id>, password:<user id>, email-code:<user id>,
new-sign-in:<user id>. A key part longer
than 128 bytes is hashed, so only its limit's prefix finds it.

Do not run it against production to lift a limit for one client: it lifts it
for everyone the prefix matches.
`,
	run: runLimits,
}

func runLimits(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "reset" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			c.printHelp(stdout)
			return 0
		}
		return c.usageError(stderr, "name the subcommand: reset")
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	key := fs.String("key", "", "")
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "")
	prefix := fs.String("table-prefix", "", "")
	redisURL := fs.String("redis-url", "", "")
	redisPrefix := fs.String("redis-prefix", cmpOr(os.Getenv("REDIS_PREFIX"), redisstore.DefaultPrefix), "")
	if exit, ok := c.parseFlags(fs, args[1:], stdout, stderr); !ok {
		return exit
	}
	rc, desc, err := redisClient(*redisURL)
	if err != nil {
		return c.usageError(stderr, err.Error())
	}
	if *dbURL == "" && rc == nil {
		return c.usageError(stderr, "no store: pass --database-url or --redis-url, or set DATABASE_URL or REDIS_URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	exit := 0
	report := func(where string, n int64, err error) {
		if err != nil {
			fmt.Fprintf(stderr, "authkit limits reset: %s: %v\n", where, err)
			exit = 1
			return
		}
		fmt.Fprintf(stdout, "authkit limits reset: cleared %d counters in %s\n", n, where)
	}
	if *dbURL != "" {
		db, err := sqlxopen.Open(ctx, *dbURL, sqlxstore.Config{TablePrefix: *prefix, CleanupInterval: -1})
		if err != nil {
			fmt.Fprintf(stderr, "authkit limits: %v\n", err)
			if errors.Is(err, sqlxstore.ErrInvalidConfig) {
				return 2
			}
			return 1
		}
		defer db.Close()
		where := fmt.Sprintf("%s (%srate_limits)", db.Dialect(), cmpOr(*prefix, sqlxstore.DefaultTablePrefix))
		ok, err := db.HasLimitsTable(ctx)
		switch {
		case err != nil:
			report(where, 0, err)
		case !ok:
			fmt.Fprintf(stdout, "authkit limits reset: %s: no such table (not migrated, or limits kept elsewhere): skipped\n", where)
		default:
			n, err := db.Limits().Clear(ctx, *key)
			report(where, n, err)
		}
	}
	if rc != nil {
		defer rc.Close()
		var s ratelimit.Clearer = redisstore.New(rc, redisstore.Config{Prefix: *redisPrefix})
		n, err := s.Clear(ctx, *key)
		report(desc+" ("+*redisPrefix+")", n, err)
	}
	return exit
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// redisClient is the client of flag (--redis-url) or else of REDIS_URL,
// REDIS_CLUSTER_URL or REDIS_SENTINEL_URL, as the example servers read
// them; nil when none is set. The error never holds the password.
func redisClient(flagURL string) (redis.UniversalClient, string, error) {
	type source struct{ name, url string }
	var set []source
	if flagURL != "" {
		set = append(set, source{"--redis-url", flagURL})
	} else {
		for _, v := range []string{"REDIS_URL", "REDIS_CLUSTER_URL", "REDIS_SENTINEL_URL"} {
			if u := os.Getenv(v); u != "" {
				set = append(set, source{v, u})
			}
		}
	}
	switch len(set) {
	case 0:
		return nil, "", nil
	case 1:
	default:
		return nil, "", fmt.Errorf("%s and %s are both set: set one", set[0].name, set[1].name)
	}
	src := set[0]
	invalid := func(err error) error {
		return fmt.Errorf("%s: %s", src.name, strings.TrimPrefix(err.Error(), "redis: "))
	}
	switch src.name {
	case "REDIS_CLUSTER_URL":
		opts, err := redis.ParseClusterURL(src.url)
		if err != nil {
			return nil, "", invalid(err)
		}
		return redis.NewClusterClient(opts), "redis cluster " + strings.Join(opts.Addrs, ","), nil
	case "REDIS_SENTINEL_URL":
		opts, err := redis.ParseFailoverURL(src.url)
		if err != nil {
			return nil, "", invalid(err)
		}
		return redis.NewFailoverClient(opts), "redis sentinel " + opts.MasterName, nil
	default:
		opts, err := redis.ParseURL(src.url)
		if err != nil {
			return nil, "", invalid(err)
		}
		return redis.NewClient(opts), "redis " + opts.Addr, nil
	}
}

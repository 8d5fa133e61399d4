#!/usr/bin/env bash
# compare.sh: the peer comparisons behind `make bench-compare`. Runs every
# benchmark of this module COUNT times (GOWORK=off: bench/ stays out of
# go.work), the HTTP load runs with wrk, then writes to OUT:
#   *.txt          raw `go test -bench` output, one file per section
#   summary.txt    benchstat's tables (medians, confidence intervals, p-values)
#   tables.md      the medians and ratios BENCHMARKS.md quotes (cmd/benchtable)
#   machine.txt    date, Go, CPUs, load average before and after
#   loadavg.txt    the load average every 30 seconds during the run
# `compare.sh tables` only remakes summary.txt and tables.md from the raw
# files already in OUT.
# Environment: COUNT (default 10), OUT (default ./results), AUTHKIT_TEST_REDIS
# (default redis://127.0.0.1:6379/0; the Redis runs skip, saying so, when it
# cannot be reached), BENCHSTAT (default: benchstat on PATH).
set -euo pipefail
cd "$(dirname "$0")"
COUNT=${COUNT:-10}
OUT=${OUT:-$PWD/results}
BENCHSTAT=${BENCHSTAT:-benchstat}
export GOWORK=off
export AUTHKIT_TEST_REDIS=${AUTHKIT_TEST_REDIS:-redis://127.0.0.1:6379/0}
mkdir -p "$OUT"
if [ "${1:-}" != tables ]; then
  rm -f "$OUT"/*.txt "$OUT"/tables.md

  loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
  {
    date -u '+date: %Y-%m-%dT%H:%M:%SZ'
    echo "go: $(go version)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) CPUs)"
    echo "count: $COUNT"
    echo "loadavg before: $(loadavg)"
  } > "$OUT/machine.txt"
  # The machine is shared: sample the load average every 30 seconds.
  ( while sleep 30; do echo "$(date -u +%H:%M:%S) $(loadavg)"; done ) > "$OUT/loadavg.txt" &
  sampler=$!
  trap 'kill "$sampler" 2>/dev/null || true' EXIT

  bench() { # bench FILE REGEXP BENCHTIME [go test flags...]
    local file=$1 re=$2 bt=$3; shift 3
    echo "== $file: -bench '$re' -benchtime $bt -count $COUNT $*"
    go test -run '^$' -timeout 60m -benchmem -count "$COUNT" -bench "$re" -benchtime "$bt" "$@" . > "$OUT/$file.txt"
  }

  # A fixed count per run: no ramp-up rounds, each repeating the set-up.
  bench limiter-memory '^BenchmarkLimiterMemory$' 300000x -cpu 1,2
  bench limiter-held '^BenchmarkLimiterMemoryHeld$' 1x
  bench limiter-redis '^BenchmarkLimiterRedis$' 20000x -v
  if grep -q -e '--- SKIP' "$OUT/limiter-redis.txt"; then
    echo "!! Redis comparison SKIPPED:"; grep -A1 -e '--- SKIP' "$OUT/limiter-redis.txt" | sed 's/^/!!   /' | head -4
  fi
  bench peers '^Benchmark(Token|SessionRead|TOTPVerify)$' 200ms
  bench session-stores '^BenchmarkSessionStoreRead$' 1000x
  bench http '^BenchmarkHTTP$' 200ms
  bench crypto '^Benchmark(Secretbox|RecoveryVerify)$' 200ms
  bench login '^Benchmark(Password|Login)$' 3x
  # The sign-in verifications side by side: bcrypt at 3 iterations a run, as
  # the login section, the others 200ms; one file, so one table.
  bench signin '^BenchmarkSignInVerify$/^factor=(totp|passkey-2fa|passkey-login|webauthn)$' 200ms
  bench signin-password '^BenchmarkSignInVerify$/^factor=password$' 3x
  grep '^BenchmarkSignInVerify' "$OUT/signin-password.txt" >> "$OUT/signin.txt"
  rm "$OUT/signin-password.txt"

  echo "== load: wrk pinned to CPU 0, the server to CPU 1"
  if ! command -v wrk >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "   installing wrk (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; } || true
  fi
  if command -v wrk >/dev/null; then
    go build -o "$OUT/benchserver" ./cmd/benchserver
    go build -o "$OUT/loadbench" ./cmd/loadbench
    "$OUT/loadbench" -server "$OUT/benchserver" -count "$COUNT" -duration 2s -login-duration 4s > "$OUT/load-all.txt"
    grep -v HTTPLoadLogin "$OUT/load-all.txt" > "$OUT/load.txt"
    grep -e '^goos' -e '^pkg' -e HTTPLoadLogin "$OUT/load-all.txt" > "$OUT/load-login.txt"
    rm "$OUT/load-all.txt"
  else
    echo "!! HTTP load runs SKIPPED: wrk is not installed and could not be (apt-get install -y wrk)"
  fi
  echo "loadavg after: $(loadavg)" >> "$OUT/machine.txt"

fi

# benchstat's view, then the tables.
{
  for f in limiter-memory limiter-held limiter-redis peers; do echo "### $f"; "$BENCHSTAT" -col /impl "$OUT/$f.txt"; done
  echo "### session-stores"; "$BENCHSTAT" -col /impl "$OUT/session-stores.txt"
  echo "### http"; "$BENCHSTAT" -col /route "$OUT/http.txt"
  echo "### crypto"; "$BENCHSTAT" "$OUT/crypto.txt"
  echo "### login"; "$BENCHSTAT" -col /path -filter '.name:Login' "$OUT/login.txt"
  "$BENCHSTAT" -filter '.name:Password' "$OUT/login.txt"
  echo "### signin"; "$BENCHSTAT" -col /factor "$OUT/signin.txt"
  if [ -s "$OUT/load.txt" ]; then
    echo "### load"; "$BENCHSTAT" -col /route "$OUT/load.txt"
    echo "### load-login"; "$BENCHSTAT" -col /path "$OUT/load-login.txt"
  fi
} > "$OUT/summary.txt" 2>&1

go build -o "$OUT/benchtable" ./cmd/benchtable
table() { # table TITLE COL UNIT FILE [FILTER]
  echo; echo "#### $1 ($3)"; echo
  "$OUT/benchtable" -col "$2" -unit "$3" ${5:+-filter "$5"} ${PAIRED:+-paired} "$OUT/$4.txt" || echo "(no data)"
}
{
  table "Rate limiter in memory" impl sec/op limiter-memory
  table "Rate limiter in memory, CPU time of the process per attempt" impl cpu-ns/op limiter-memory
  table "Rate limiter in memory" impl allocs/op limiter-memory
  table "Rate limiter in memory, capped store" impl refused/op limiter-memory
  table "Rate limiter in memory, held" impl B/key limiter-held
  for u in sec/op cmds/op trips/op srv-cmds/op srv-scripts/op srv-script-us/op keys-no-ttl allocs/op; do
    table "Rate limiter on Redis" impl "$u" limiter-redis
  done
  table "Tokens" impl sec/op peers Token
  table "Tokens" impl allocs/op peers Token
  table "Session read" impl sec/op peers SessionRead
  table "Session read" impl allocs/op peers SessionRead
  table "Session read from a store (Redis, PostgreSQL)" impl sec/op session-stores
  table "Session read from a store (Redis, PostgreSQL)" impl allocs/op session-stores
  table "TOTP verify" impl sec/op peers TOTPVerify
  table "HTTP in process" route sec/op http
  table "HTTP in process" route allocs/op http
  table "Crypto" impl sec/op crypto
  table "Password (bcrypt cost 12)" impl sec/op login Password
  table "Login against its hash" path sec/op login Login
  table "Sign-in verifications, typed, memory store" factor sec/op signin
  table "Sign-in verifications, CPU time of the process per call" factor cpu-ns/op signin
  table "Sign-in verifications, typed, memory store" factor allocs/op signin
  if [ -s "$OUT/load.txt" ]; then
    # Load runs are made side by side on a machine whose load drifts: their
    # ratios are run by run.
    PAIRED=1 table "HTTP under load, ratios run by run" route req/s load
    for u in req/s cpu-ms/req; do PAIRED=1 table "Login under load against the hash alone, ratios run by run" path "$u" load-login; done
  fi
} > "$OUT/tables.md"
cat "$OUT/machine.txt"
echo "results: $OUT (summary.txt: benchstat; tables.md: medians and ratios)"

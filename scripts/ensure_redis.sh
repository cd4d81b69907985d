#!/usr/bin/env bash
# Make sure a Redis server answers PING on 127.0.0.1:${REDIS_PORT:-6379}; quiet when it already does.
# Installs Debian's redis-server (apt-get, non-interactive) if the binary is missing, then starts a
# throw-away instance: loopback only, no persistence, logs in /tmp. Idempotent.
set -euo pipefail

PORT="${REDIS_PORT:-6379}"
HOST=127.0.0.1
LOG=/tmp/redis-ci.log
[ "$PORT" = 6379 ] || LOG="/tmp/redis-ci-$PORT.log"

ping_redis() {
    if command -v redis-cli >/dev/null 2>&1; then
        [ "$(redis-cli -h "$HOST" -p "$PORT" ping 2>/dev/null)" = "PONG" ]
    else
        # bash's /dev/tcp: send an inline PING, expect +PONG
        (exec 3<>"/dev/tcp/$HOST/$PORT" && printf 'PING\r\n' >&3 && timeout 1 head -c 5 <&3 | grep -q '+PONG') \
            2>/dev/null
    fi
}

ping_redis && exit 0

if ! command -v redis-server >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi

redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$PORT" --save "" --appendonly no \
    --dir /tmp --logfile "$LOG" >/dev/null

for _ in $(seq 1 50); do
    ping_redis && exit 0
    sleep 0.1
done
echo "ensure_redis: redis-server did not answer on $HOST:$PORT (see $LOG)" >&2
exit 1

#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server, then stops the server and deletes it.
#
#   bash scripts/pg.sh [--fsync] -- COMMAND [ARGS...]
#
# Finds initdb and pg_ctl on PATH, else in /usr/lib/postgresql/*/bin (the newest); initdb's a
# cluster into a temporary directory, starts it on a free port on 127.0.0.1 (no TCP elsewhere,
# trust authentication for the local test user), and runs COMMAND with:
#   JEVJUDGE_TEST_PG_URL    postgresql://postgres@127.0.0.1:PORT/postgres
#   JEVJUDGE_TEST_PG_STOP   a shell command that stops the server (for store-down tests)
#   JEVJUDGE_TEST_PG_START  a shell command that starts it again on the same port
# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user (which
# must exist) and every server command runs through runuser/su. The server is stopped and the
# directory removed on exit, whatever COMMAND did. fsync is off unless --fsync (tests need no
# durability; benchmarks do). Exit status: COMMAND's, or 1 when the server cannot start.
set -euo pipefail

fsync=off
while [ $# -gt 0 ]; do
    case "$1" in
        --fsync) fsync=on; shift ;;
        --) shift; break ;;
        *) echo "pg.sh: unknown option $1 (usage: pg.sh [--fsync] -- COMMAND ...)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "pg.sh: no command (usage: pg.sh [--fsync] -- COMMAND ...)" >&2; exit 2; }

find_bin() {
    local found
    found=$(command -v "$1" 2>/dev/null || true)
    if [ -z "$found" ]; then
        found=$(ls -d /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -n 1 || true)
    fi
    [ -n "$found" ] || { echo "pg.sh: cannot find $1 (install PostgreSQL 15: apt-get install postgresql)" >&2; exit 1; }
    printf '%s\n' "$found"
}
INITDB=$(find_bin initdb)
PG_CTL=$(find_bin pg_ctl)

dir=$(mktemp -d "${TMPDIR:-/tmp}/jevjudge-pg.XXXXXX")
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "pg.sh: running as root needs a 'postgres' user" >&2; exit 1; }
    chown postgres "$dir"
    if command -v runuser >/dev/null 2>&1; then
        as_pg() { runuser -u postgres -- "$@"; }
    else
        as_pg() { su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; }
    fi
    as_pg_text="runuser -u postgres --"
    command -v runuser >/dev/null 2>&1 || as_pg_text="su postgres -s /bin/sh -c"
else
    as_pg() { "$@"; }
    as_pg_text=""
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

stop() {
    as_pg "$PG_CTL" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT

if ! as_pg "$INITDB" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1; then
    echo "pg.sh: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1
fi
options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=$fsync -c max_connections=200"
if ! as_pg "$PG_CTL" -D "$dir/data" -l "$dir/server.log" -o "$options" -w -t 30 start >/dev/null; then
    echo "pg.sh: the server did not start:" >&2; cat "$dir/server.log" >&2; exit 1
fi

export JEVJUDGE_TEST_PG_URL="postgresql://postgres@127.0.0.1:$port/postgres"
if [ -n "$as_pg_text" ] && [ "$as_pg_text" != "runuser -u postgres --" ]; then
    export JEVJUDGE_TEST_PG_STOP="su postgres -s /bin/sh -c '$PG_CTL -D $dir/data -m fast -w stop'"
    export JEVJUDGE_TEST_PG_START="su postgres -s /bin/sh -c '$PG_CTL -D $dir/data -l $dir/server.log -o \"$options\" -w start'"
else
    export JEVJUDGE_TEST_PG_STOP="$as_pg_text $PG_CTL -D $dir/data -m fast -w stop"
    export JEVJUDGE_TEST_PG_START="$as_pg_text $PG_CTL -D $dir/data -l $dir/server.log -o '$options' -w start"
fi
echo "pg.sh: PostgreSQL $("$PG_CTL" --version | sed "s/^pg_ctl (PostgreSQL) //") on 127.0.0.1:$port, data in $dir" >&2
status=0
"$@" || status=$?
exit "$status"

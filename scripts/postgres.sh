#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a folder, for tests, CI and benchmarks (issue 17). Debian's `postgresql`
# package provides the binaries (installed when missing); the cluster lives in DIR alone.
#
#   scripts/postgres.sh install              installs the package when missing (fails when apt-get fails)
#   scripts/postgres.sh start DIR            initdb (first time) and start; prints the URL, one line:
#                                            postgres://storefront@127.0.0.1:PORT/storefront
#   scripts/postgres.sh url DIR              the URL of the running cluster in DIR
#   scripts/postgres.sh restart DIR          a fast restart on the same port (for fault tests)
#   scripts/postgres.sh stop DIR             a fast shutdown; does nothing when it is not running
#   scripts/postgres.sh createdb DIR NAME [TEMPLATE]   a new database (copied from TEMPLATE); prints its URL
#   scripts/postgres.sh dropdb DIR NAME      drops NAME if it exists, closing its connections
#
# Only URLs go to stdout; everything else goes to stderr. Files in DIR: data/ (the cluster), socket/ (its
# Unix socket), log (the server's log), initdb.log, url.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    sed -n '5,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# bin_dir [MAJOR]: the folder of PostgreSQL MAJOR's binaries, else of the newest installed version.
bin_dir() {
    if [ -n "${1:-}" ]; then
        [ -x "/usr/lib/postgresql/$1/bin/postgres" ] || { echo "PostgreSQL $1 is not installed" >&2; return 1; }
        echo "/usr/lib/postgresql/$1/bin"
        return
    fi
    local newest
    newest=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/initdb' 2>/dev/null |
        sed 's|^/usr/lib/postgresql/||; s|/bin/initdb$||' | sort -V | tail -n 1)
    [ -n "$newest" ] || { echo "no PostgreSQL under /usr/lib/postgresql (scripts/postgres.sh install)" >&2; return 1; }
    echo "/usr/lib/postgresql/$newest/bin"
}

install_postgresql() {
    bin_dir >/dev/null 2>&1 || install_debian_packages postgresql
    bin_dir >/dev/null
}

# as_owner COMMAND...: runs COMMAND as the cluster's owner. PostgreSQL refuses to run as root, so as root
# that is the `postgres` system user the package creates; otherwise it is the current user.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# The binaries of the cluster in $dir: the version that made it, once it exists.
cluster_bin() {
    if [ -f "$dir/data/PG_VERSION" ]; then
        bin_dir "$(cat "$dir/data/PG_VERSION")"
    else
        bin_dir
    fi
}

running() {
    [ -f "$dir/data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# psql_admin SQL: runs SQL in the `storefront` database over the loopback URL.
psql_admin() {
    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -d "$(cat "$dir/url")" -c "$1" >&2
}

# Quotes an identifier for SQL ("" doubles a quote).
ident() {
    printf '"%s"' "${1//\"/\"\"}"
}

start() {
    install_postgresql
    bin=$(cluster_bin)
    if running; then
        echo "already running in $dir" >&2
        cat "$dir/url"
        return
    fi
    mkdir -p "$dir/socket"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres: "$dir"
        as_owner test -w "$dir" || {
            echo "the postgres user cannot write to $dir (is a parent folder private?); use a folder under /tmp" >&2
            return 1
        }
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        # -A trust: any local user may connect as any role without a password. Acceptable only because the
        # server listens on 127.0.0.1 and a socket inside DIR, never on a public address, and the cluster
        # is thrown away. The C locale sorts text by bytes, as SQLite's default BINARY collation does.
        # --no-sync: a crash of the machine during initdb would only lose a throwaway cluster.
        # Its chatter is kept in DIR/initdb.log and shown only when it fails.
        as_owner "$bin/initdb" -D "$dir/data" -A trust -U storefront -E UTF8 --locale=C --no-sync \
            >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
        # Our settings live in their own file, rewritten at each start (the port may change).
        echo "include 'storefront.conf'" >> "$dir/data/postgresql.conf"
    fi
    # A free port can be taken between asking and binding: retry with another one.
    local attempt port
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        # Loopback only. max_connections: ~40 server processes holding a few pooled connections each,
        # plus the tests' own psql sessions.
        cat > "$dir/data/storefront.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/socket'
max_connections = 300
EOF
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >&2; then
            break
        fi
        tail -n 5 "$dir/log" 2>/dev/null | grep -q 'could not bind\|Address already in use' && [ "$attempt" -lt 5 ] || {
            echo "PostgreSQL did not start; the end of $dir/log:" >&2
            tail -n 20 "$dir/log" >&2 || true
            return 1
        }
        echo "port $port was taken; trying another" >&2
    done
    local waited=0
    until "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U storefront -d postgres; do
        ((++waited <= 300)) || { echo "PostgreSQL is not ready after 30 s; see $dir/log" >&2; return 1; }
        sleep 0.1
    done
    echo "postgres://storefront@127.0.0.1:$port/storefront" > "$dir/url"
    if [ -z "$("$bin/psql" -X -tA -h 127.0.0.1 -p "$port" -U storefront -d postgres \
        -c "SELECT 1 FROM pg_database WHERE datname = 'storefront'")" ]; then
        "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U storefront -d postgres \
            -c 'CREATE DATABASE storefront' >&2
    fi
    cat "$dir/url"
}

stop() {
    [ -f "$dir/data/PG_VERSION" ] || return 0
    bin=$(cluster_bin)
    running || return 0
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >&2
}

restart() {
    bin=$(cluster_bin)
    running || { echo "no cluster runs in $dir" >&2; return 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -m fast -w -t 60 restart >&2
}

url() {
    bin=$(cluster_bin)
    running || { echo "no cluster runs in $dir" >&2; return 1; }
    cat "$dir/url"
}

command=${1:-}
[ "$command" = install ] && { install_postgresql; exit; }
[ $# -ge 2 ] || usage
[ "$command" != start ] || mkdir -p "$2"
# An absolute path: the socket folder is written into the cluster's settings.
dir=$( (cd "$2" 2>/dev/null && pwd) || echo "$2")
case "$command" in
    start | stop | restart | url)
        [ $# -eq 2 ] || usage
        "$command"
        ;;
    createdb)
        [ $# -ge 3 ] && [ $# -le 4 ] || usage
        url >/dev/null
        psql_admin "CREATE DATABASE $(ident "$3")${4:+ TEMPLATE $(ident "$4")}"
        base=$(cat "$dir/url")
        echo "${base%/*}/$3"
        ;;
    dropdb)
        [ $# -eq 3 ] || usage
        url >/dev/null
        # WITH (FORCE) (PostgreSQL 13+) ends the connections still open on it.
        psql_admin "DROP DATABASE IF EXISTS $(ident "$3") WITH (FORCE)"
        ;;
    *) usage ;;
esac

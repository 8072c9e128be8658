#!/usr/bin/env bash
# Tests of the Neovim plugin, headless: the JSON Patch applier, line totals, the commands end to end against a
# database in a temporary folder, and the server's end when Neovim quits or is killed.
# Installs neovim (Debian's) and builds the server when missing. Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

. "$repo/scripts/lib.sh"

if ! command -v nvim >/dev/null; then
    install_debian_packages neovim || { echo "nvim tests: could not install neovim" >&2; exit 1; }
fi
build_server_unless_built "$repo" || { echo "nvim tests: build failed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export STOREFRONT_TEST_DB=$work/shop.sqlite STOREFRONT_PID_FILE=$work/server.pid
export XDG_STATE_HOME=$work/state XDG_CACHE_HOME=$work/cache # keep the LSP log out of the user's
export STOREFRONT_TOKEN_FILE=$work/token # and the session token
passed=0 failed=0
check() {
    local name=$1
    shift
    if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}
# Every wait here and in the Lua tests polls a condition and ends as soon as it holds; its bound (60 s
# for one condition, 600 s for a whole script) only decides when something stuck fails the test.
headless() { # SCRIPT: runs a test script in a bare headless Neovim with the plugin on the runtimepath
    timeout 600 nvim --headless -u NONE -i NONE -c "set rtp+=$here" -c 'runtime plugin/storefront.lua' -c "luafile $here/tests/$1" 2>&1
}
gone() { # PID: the process has ended (and, as our descendant, been reaped)
    local pid=$1
    for _ in $(seq 600); do
        [ -e "/proc/$pid" ] || return 0
        sleep 0.1
    done
    echo "  server $pid still there: $(ps -o pid=,stat=,args= -p "$pid")"
    return 1
}
ended() { # PID: gone, or a zombie left to init once its parent was killed
    local pid=$1
    for _ in $(seq 600); do
        [ -e "/proc/$pid" ] || return 0
        grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "  server $pid still running: $(ps -o pid=,stat=,args= -p "$pid")"
    return 1
}

headless jsonpatch_spec.lua | tee "$work/patch.out"
check "JSON Patch applier" grep -q '^jsonpatch: [0-9]* passed, 0 failed' "$work/patch.out"

headless money_spec.lua | tee "$work/money.out"
check "cart line totals" grep -q '^money: [0-9]* passed, 0 failed' "$work/money.out"

headless render_spec.lua | tee "$work/render.out"
check "rendering of failed pages and carts" grep -q '^render: [0-9]* passed, 0 failed' "$work/render.out"

headless storefront_spec.lua | tee "$work/e2e.out"
check "commands end to end" grep -q '^nvim: [0-9]* passed, 0 failed' "$work/e2e.out"

headless leave.lua >"$work/leave.out"
check "Neovim quits cleanly" test $? -eq 0
check "VimLeavePre stops the server" gone "$(cat "$STOREFRONT_PID_FILE")"

rm -f "$STOREFRONT_PID_FILE"
STOREFRONT_HANG=1 nvim --headless -u NONE -i NONE -c "set rtp+=$here" -c 'runtime plugin/storefront.lua' \
    -c "luafile $here/tests/leave.lua" >"$work/hang.out" 2>&1 &
editor=$!
for _ in $(seq 600); do [ -s "$STOREFRONT_PID_FILE" ] && break; sleep 0.1; done
server=$(cat "$STOREFRONT_PID_FILE" 2>/dev/null)
check "the server starts" test -n "$server"
kill -KILL "$editor"
wait "$editor" 2>/dev/null
check "killing Neovim leaves no server running" ended "${server:-0}"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

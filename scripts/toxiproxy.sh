# Toxiproxy (github.com/Shopify/toxiproxy/v2), the fault-injection TCP proxy that puts latency,
# a per-connection bandwidth cap, resets, stalls and slow closes between hpcio and a local
# object store (tests/servers.py's ProxiedStore, python/hpcio/conditions.toml). Sourced by
# scripts/servers; its API and every proxy it opens listen on loopback (or on an address the
# caller names, such as the host end of a test's own veth pair), never on a public address.
#
#   toxiproxy_start DIR [HOST]  start the server with its API on HOST (127.0.0.1) and a free
#                               port; writes DIR/toxiproxy.pid and DIR/toxiproxy.env
#                               (TOXIPROXY_URL=http://HOST:PORT) and prints the URL
#   toxiproxy_stop DIR          stop it by the PID it recorded (SIGTERM, SIGKILL after 10 s)

toxiproxy_free_port() {
    "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

toxiproxy_start() {
    local run=$1 host=${2:-127.0.0.1} port pid i
    case "$host" in
        127.*|10.*) ;;
        *) die "toxiproxy listens on loopback or a test's own namespace address only, not $host" ;;
    esac
    [ -x "$dir/bin/toxiproxy-server" ] || die "toxiproxy is not installed: run scripts/servers install"
    mkdir -p "$run"
    if [ -f "$run/toxiproxy.pid" ] && kill -0 "$(cat "$run/toxiproxy.pid")" 2>/dev/null; then
        die "a toxiproxy already runs for $run (PID $(cat "$run/toxiproxy.pid"))"
    fi
    port=$(toxiproxy_free_port)
    "$dir/bin/toxiproxy-server" -host "$host" -port "$port" >"$run/toxiproxy.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$run/toxiproxy.pid"
    for i in $(seq 100); do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$run/toxiproxy.log" >&2
            rm -f "$run/toxiproxy.pid"
            die "toxiproxy exited while starting (log above)"
        fi
        if "$venv/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
            "http://$host:$port/version" >/dev/null 2>&1; then
            echo "TOXIPROXY_URL=http://$host:$port" >"$run/toxiproxy.env"
            echo "http://$host:$port"
            return 0
        fi
        sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    rm -f "$run/toxiproxy.pid"
    die "toxiproxy did not answer on http://$host:$port within 10 s"
}

toxiproxy_stop() {
    local run=$1 pid i
    [ -f "$run/toxiproxy.pid" ] || die "no toxiproxy recorded in $run"
    pid=$(cat "$run/toxiproxy.pid")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for i in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$run/toxiproxy.pid" "$run/toxiproxy.env"
}

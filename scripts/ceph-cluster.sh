# A one-node Ceph cluster for the tests, sourced by scripts/servers (ceph-start, ceph-stop).
#
# Every daemon listens on 127.0.0.1 only, on ports chosen free at start; every file it writes
# (configuration, keyrings, monitor store, the OSD's 8 GiB sparse block file, logs, sockets,
# PID files, the mount point) is under DIR. ceph-stop stops what DIR/run/*.pid names and no
# other process. Pacific's warnings that a one-node test cluster always raises are turned off
# in ceph.conf (one OSD: pool size 1 and small pg_num with autoscaling off; no standby MDS;
# a test disk may be under 30 % free), so the cluster reaches HEALTH_OK and start waits for it.

ceph_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait up to $1 seconds for the command after it to succeed.
ceph_wait_for() {
    local seconds=$1 waited=0
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$waited" -lt "$((seconds * 5))" ] || return 1
        sleep 0.2
        waited=$((waited + 1))
    done
}

ceph_healthy() {
    # HEALTH_OK can come before every placement group is active+clean: both are waited for.
    local status
    status=$(ceph -c "$CEPH_CONF" status --format json 2>/dev/null) || return 1
    python3 - "$status" <<'EOF'
import json, sys
status = json.loads(sys.argv[1])
pgs = status["pgmap"]
clean = sum(s["count"] for s in pgs.get("pgs_by_state", []) if s["state_name"] == "active+clean")
fs_up = status.get("fsmap", {}).get("up", 0) >= 1
sys.exit(0 if status["health"]["status"] == "HEALTH_OK" and clean == pgs["num_pgs"] and fs_up else 1)
EOF
}

ceph_start() {
    local dir
    [ -z "$(ceph_missing)" ] || die "Ceph is not installed ($(ceph_missing) is missing): run scripts/servers install as root"
    [ "$(id -u)" = 0 ] || die "the Ceph cluster needs root (its OSD and the ceph-fuse mount)"
    mkdir -p "$1"
    dir=$(cd "$1" && pwd)
    [ -z "$(ls -A "$dir")" ] || die "$dir is not empty: ceph-start needs a new directory"
    CEPH_CONF="$dir/ceph.conf"
    local started=$SECONDS fsid mon_port rgw_port osd_uuid
    fsid=$(uuidgen)
    osd_uuid=$(uuidgen)
    mon_port=$(ceph_free_port)
    rgw_port=$(ceph_free_port)
    mkdir -p "$dir"/{run,log,mon/ceph-a,mgr/ceph-x,osd/ceph-0,mds/ceph-a,rgw/ceph-rgw,mnt,crash}
    # A failure half-way stops what did start.
    trap 'say "ceph-start failed; stopping what started (logs: $dir/log)"; ceph_stop "$dir"' ERR
    set -E
    cat >"$CEPH_CONF" <<EOF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$mon_port]
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_ipv6 = false
ms_bind_msgr1 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
keyring = $dir/keyring
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
pid_file = $dir/run/\$name.pid
log_file = $dir/log/\$name.log
crash_dir = $dir/crash
log_to_stderr = false
err_to_stderr = false
mon_cluster_log_file = $dir/log/cluster.log
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_max_pg_per_osd = 1000
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
mon_data_avail_warn = 1
mon_data_avail_crit = 0
mon_warn_on_insecure_global_id_reclaim = false
mon_warn_on_insecure_global_id_reclaim_allowed = false

[mon]
public_addr = v2:127.0.0.1:$mon_port
mon_data = $dir/mon/ceph-\$id

[mgr]
mgr_data = $dir/mgr/ceph-\$id
keyring = $dir/mgr/ceph-\$id/keyring

[osd]
osd_data = $dir/osd/ceph-\$id
keyring = $dir/osd/ceph-\$id/keyring
osd_objectstore = bluestore
bluestore_block_path = $dir/osd/ceph-\$id.block
bluestore_block_create = true
bluestore_block_size = 8589934592
osd_memory_target = 939524096

[mds]
mds_data = $dir/mds/ceph-\$id
keyring = $dir/mds/ceph-\$id/keyring

[client.admin]
# The command-line tool needs none; ceph-fuse is given its own.
admin_socket =

[client.rgw]
rgw_data = $dir/rgw/ceph-rgw
keyring = $dir/rgw/ceph-rgw/keyring
rgw_frontends = beast endpoint=127.0.0.1:$rgw_port
rgw_dns_name = 127.0.0.1
# Deleted objects' data goes back to the 8 GiB OSD within seconds: radosgw's garbage collector
# waits 2 h by default, and a few GiB-sized runs then fill the OSD, after which every write
# blocks (HEALTH_ERR: full osd).
rgw_gc_obj_min_wait = 0
rgw_gc_processor_period = 5
EOF
    local keyring="$dir/keyring" ctl=(ceph -c "$CEPH_CONF")
    ceph-authtool --create-keyring "$keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    ceph-authtool "$keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
        --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
    chmod 600 "$keyring"
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
    ceph-mon -c "$CEPH_CONF" --mkfs -i a --monmap "$dir/monmap" --keyring "$keyring"
    ceph-mon -c "$CEPH_CONF" -i a
    ceph_wait_for 30 "${ctl[@]}" mon stat
    "${ctl[@]}" config set mon auth_allow_insecure_global_id_reclaim false

    "${ctl[@]}" auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
        -o "$dir/mgr/ceph-x/keyring"
    ceph-mgr -c "$CEPH_CONF" -i x

    local osd_id
    osd_id=$("${ctl[@]}" osd new "$osd_uuid")
    [ "$osd_id" = 0 ] || die "the new OSD is osd.$osd_id, not osd.0"
    "${ctl[@]}" auth get-or-create osd.0 osd 'allow *' mon 'allow profile osd' \
        mgr 'allow profile osd' -o "$dir/osd/ceph-0/keyring"
    ceph-osd -c "$CEPH_CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$dir/log/osd-mkfs.log" 2>&1
    ceph-osd -c "$CEPH_CONF" -i 0

    "${ctl[@]}" osd pool create cephfs_metadata 8 >/dev/null 2>&1
    "${ctl[@]}" osd pool create cephfs_data 8 >/dev/null 2>&1
    "${ctl[@]}" fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1
    "${ctl[@]}" fs set cephfs standby_count_wanted 0
    "${ctl[@]}" auth get-or-create mds.a mon 'allow profile mds' osd 'allow rwx' mds 'allow' \
        mgr 'allow profile mds' -o "$dir/mds/ceph-a/keyring"
    ceph-mds -c "$CEPH_CONF" -i a

    "${ctl[@]}" auth get-or-create client.rgw mon 'allow rw' osd 'allow rwx' mgr 'allow rw' \
        -o "$dir/rgw/ceph-rgw/keyring"
    radosgw -c "$CEPH_CONF" -n client.rgw --keyring "$dir/rgw/ceph-rgw/keyring"

    ceph_wait_for 120 ceph_healthy || die "the cluster did not reach HEALTH_OK with every placement group active+clean in 120 s: $("${ctl[@]}" health detail 2>&1 | head -5)"
    ceph-fuse -c "$CEPH_CONF" --pid-file "$dir/run/ceph-fuse.pid" \
        --admin-socket "$dir/run/ceph-fuse.asok" --client_mountpoint=/ "$dir/mnt" \
        >/dev/null 2>&1
    ceph_wait_for 30 mountpoint -q "$dir/mnt"

    # S3 credentials made here, for this cluster only: DIR/cluster.env holds them (mode 600).
    local access_key secret_key
    access_key=hpcio$(uuidgen | tr -d - | cut -c1-15)
    secret_key=$(uuidgen | tr -d -)$(uuidgen | tr -d - | cut -c1-8)
    ceph_wait_for 60 curl -sf -o /dev/null "http://127.0.0.1:$rgw_port/"
    radosgw-admin -c "$CEPH_CONF" -n client.admin user create --uid hpcio-test \
        --display-name hpcio-test --access-key "$access_key" --secret-key "$secret_key" >/dev/null
    umask 077
    cat >"$dir/cluster.env" <<EOF
CEPH_CONF=$CEPH_CONF
CEPH_MOUNT=$dir/mnt
RGW_ENDPOINT=http://127.0.0.1:$rgw_port
RGW_ACCESS_KEY=$access_key
RGW_SECRET_KEY=$secret_key
EOF
    trap - ERR
    say "ceph: up in $((SECONDS - started)) s: S3 at http://127.0.0.1:$rgw_port, CephFS at $dir/mnt (settings in $dir/cluster.env)"
}

ceph_stop() {
    local dir pid_file pid name waited
    dir=$(cd "$1" 2>/dev/null && pwd) || die "no cluster in $1"
    CEPH_CONF="$dir/ceph.conf"
    if mountpoint -q "$dir/mnt" 2>/dev/null; then
        umount "$dir/mnt" 2>/dev/null || umount -l "$dir/mnt" 2>/dev/null || true
    fi
    # The MDS ignores SIGTERM for about 10 s while the file system is up: take it down first.
    if [ -f "$dir/run/mds.a.pid" ]; then
        timeout 10 ceph -c "$CEPH_CONF" fs fail cephfs >/dev/null 2>&1 || true
    fi
    # Every daemon at once, then the monitor (the others talk to it on their way out).
    ceph_stop_daemons "$dir" ceph-fuse client.rgw mds.a osd.0 mgr.x
    ceph_stop_daemons "$dir" mon.a
    # `ceph fs fail` makes the MDS respawn: a new process, whose PID may come after its PID
    # file was read. Whatever still runs with this cluster's config goes too.
    local stray
    stray=$(ceph_processes "$dir")
    if [ -n "$stray" ]; then
        # shellcheck disable=SC2086
        kill -TERM $stray 2>/dev/null || true
        sleep 2
        stray=$(ceph_processes "$dir")
        # shellcheck disable=SC2086
        [ -z "$stray" ] || kill -KILL $stray 2>/dev/null || true
    fi
}

# The PIDs of the processes started with this cluster's ceph.conf (its path is unique).
ceph_processes() {
    local cmdline pid
    for cmdline in /proc/[0-9]*/cmdline; do
        pid=${cmdline#/proc/}
        pid=${pid%/cmdline}
        [ "$pid" != $$ ] || continue
        if tr '\0' ' ' <"$cmdline" 2>/dev/null | grep -qF -- "-c $1/ceph.conf "; then
            echo "$pid"
        fi
    done
}

# SIGTERM to each named daemon of this cluster, SIGKILL to those still there after 15 s.
ceph_stop_daemons() {
    local dir=$1 name pid waited pids=()
    shift
    for name in "$@"; do
        [ -f "$dir/run/$name.pid" ] || continue
        pid=$(cat "$dir/run/$name.pid")
        # Only a daemon this cluster started: its command line names this cluster's config.
        if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/ceph.conf"; then
            kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
        fi
        rm -f "$dir/run/$name.pid"
    done
    for pid in "${pids[@]}"; do
        waited=0
        while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 75 ]; do
            sleep 0.2
            waited=$((waited + 1))
        done
        kill -KILL "$pid" 2>/dev/null || true
    done
}

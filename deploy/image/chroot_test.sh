#!/usr/bin/env bash
# The image's test. Containers cannot start on these machines (the runtime's
# setrlimit is refused), so the root file system that build.sh made is
# started under chroot instead: `inferd serve` on the example store, as the
# user inferd (10001), in a private mount namespace (the store bind-mounted
# read-only at /models; /proc, /sys, /dev from the host). It must report
# ready, classify examples/images/cat.jpg with resnet18 (5 labels) and
# examples/model-store/digits_cnn/samples/0000_4.png as a 4 with digits_cnn,
# run as uid 10001, and exit 0 on SIGTERM.
#
#   deploy/image/chroot_test.sh      (env: OUT=build/image STORE=examples/model-store)
# Needs root, the rootfs of deploy/image/build.sh and the example models (make models).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(realpath -m "${OUT:-$ROOT/build/image}")
STORE=$(realpath "${STORE:-$ROOT/examples/model-store}")
R="$OUT/rootfs"
[ -x "$R/usr/local/bin/inferd" ] || { echo "chroot_test: no $R (run deploy/image/build.sh)" >&2; exit 1; }
[ -f "$STORE/resnet18/1/model.pt" ] || { echo "chroot_test: no models in $STORE (make models)" >&2; exit 1; }
start=$(date +%s)
log=$(mktemp)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$log"
}
trap cleanup EXIT

# unshare and the shell exec into chroot and then inferd: $! is inferd's pid.
unshare --mount --propagation private -- bash -c '
  set -e
  mount --bind "$1" "$2/models" && mount -o remount,bind,ro "$2/models"
  mount -t proc proc "$2/proc"
  mount --rbind /sys "$2/sys"
  mount --rbind /dev "$2/dev"
  exec chroot --userspec=10001:10001 "$2" /usr/local/bin/inferd serve --model-store /models \
    --bind 127.0.0.1 --http-port 0 --management-port 0 --metrics-port 0' _ "$STORE" "$R" > "$log" 2>&1 &
pid=$!

/usr/bin/python3 - "$log" "$pid" "$ROOT" <<'PY'
import json, re, sys, time, urllib.request
log, pid, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def fail(msg):
    sys.exit(f"chroot_test: {msg}\n--- server log ---\n{open(log).read()}")

port = None
deadline = time.time() + 180
while time.time() < deadline and port is None:
    m = re.search(r"listening http=(\d+)", open(log).read())
    port = m and int(m.group(1))
    time.sleep(0.2)
if not port:
    fail("the server printed no ports in 180 s")
base = f"http://127.0.0.1:{port}"
while True:
    try:
        if urllib.request.urlopen(base + "/v2/health/ready", timeout=5).status == 200:
            break
    except Exception:
        pass
    if time.time() > deadline:
        fail("not ready in 180 s")
    time.sleep(0.5)

def post(path, file):
    data = open(f"{root}/{file}", "rb").read()
    req = urllib.request.Request(base + path, data=data, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())

cat = post("/predictions/resnet18", "examples/images/cat.jpg")
if len(cat) != 5 or not all(0 <= p <= 1 for p in cat.values()):
    fail(f"resnet18 answered {cat}")
digit = post("/predictions/digits_cnn", "examples/model-store/digits_cnn/samples/0000_4.png")
if max(digit, key=digit.get) != "4":
    fail(f"digits_cnn answered {digit} for a 4")
uid = next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("Uid:"))
if uid != "10001":
    fail(f"inferd runs as uid {uid}, not 10001")
print(f"chroot_test: resnet18 {json.dumps(cat)}")
print(f"chroot_test: digits_cnn {json.dumps(digit)}; uid {uid}")
PY
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" -eq 0 ] || { cat "$log" >&2; echo "chroot_test: exit $rc after SIGTERM" >&2; exit 1; }
echo "chroot_test: passed in $(( $(date +%s) - start )) s"

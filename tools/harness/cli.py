"""The harness for shell scripts: python3 -m tools.harness COMMAND (from the repository root).

  serve  NAME --out DIR [--binary B] [--store S] [server options] [-- more serve flags]
  peer   NAME --out DIR --model-dir D --mode M [--app text_app|xgb_app] [server options]
      Start the server, wait until it is ready (InferdServer / PeerServer), write
      DIR/NAME.env (VAR_HTTP= VAR_MANAGEMENT= VAR_METRICS= VAR_GRPC= VAR_PID=, for `.`;
      VAR: --var, default NAME in capitals; a peer has only HTTP and PID), and return
      while the server keeps running: a small supervisor process owns it until `stop`
      (DIR/NAME.state). On failure: the log's tail on stderr, exit status 1. So:
          python3 -m tools.harness serve server --out "$OUT" --store S -- --models m
          . "$OUT/server.env"     # SERVER_HTTP, SERVER_METRICS, SERVER_PID, ...
      The server is also stopped when the calling process (the script) exits without
      `stop` (--owner PID: another process; 0: never).
      Server options: --cpus LIST (taskset -c), --nice N, --env NAME=VALUE (repeatable),
      --timeout S (readiness, default 300), --ready-path PATH.
  stop DIR/NAME...   (or DIR/NAME.state: `stop "$OUT"/*.state` in an EXIT trap)
      SIGTERM, wait, print "NAME: exit code N" on stderr (skips names not started or
      already stopped). --check: exit status 1 unless every code is 0.
  bench DIR/NAME [--json F] [--series S]... [--server-metrics] [--cpus L] [--nice N]
        -- INFERD-BENCH FLAGS
      `inferd bench` against that server (--url filled in, grpc:// when the flags say
      --protocol grpc; --server-metrics: --metrics-url too, for inferd), then adds
      "harness" to the report F:
      the server's CPU seconds over the run (server_cpu_s, its process tree), the load
      generator's own (load_cpu_s), wall seconds, the load average before and after, and
      the change of each /metrics series S.
  measure DIR/NAME [--json F] [--series S]... -- COMMAND...
      The same figures around any command (wrk, curl loops); printed when no --json.
  proc PID          procs= minflt= majflt= rss_bytes= cpu_s= of the process tree (tree_stats)
  metric URL NAME [LABEL=VALUE]...   the sum of a /metrics series

A series S is NAME or NAME{label=value,...}.
"""

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

from .probes import cpu_seconds, loadavg, metric, parse_series, scrape, tree_stats
from .server import InferdServer, PeerServer, default_binary, launch_prefix

NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


# ------------------------------------------------------------------ start, supervise, stop

def _state_paths(base):
    return base + ".state", base + ".exit"


def _write(path, text):
    """Whole or not at all: a reader never sees half a file."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def _start(server, args):
    """Forks a supervisor that starts `server` and owns it; returns once it is ready."""
    if not NAME.match(args.name):
        sys.exit(f"harness: a name is letters, digits, '_', '.' and '-': {args.name!r}")
    owner = os.getppid() if args.owner is None else args.owner
    base = os.path.join(os.path.abspath(args.out), args.name)
    state_path, exit_path = _state_paths(base)
    for p in (state_path, exit_path, base + ".env"):
        if os.path.exists(p):
            os.unlink(p)
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    if os.fork():  # the caller: wait for the supervisor's word
        os.close(w)
        with os.fdopen(r) as f:
            word = f.read()
        if not word.startswith("ready\n"):
            sys.stderr.write(word or f"harness: the supervisor of {args.name} died\n")
            return 1
        print(f"harness: {args.name} ready ({word[6:].strip()}); variables in {base}.env",
              file=sys.stderr)
        return 0
    # The supervisor: its own session, no hold on the caller's terminal or pipes.
    os.close(r)
    os.setsid()
    log = os.open(base + ".harness.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        server.start()
    except Exception as e:  # whatever it is, the caller prints it
        os.write(w, f"harness: {e}\n".encode())
        os._exit(1)
    state = {"kind": server.kind, "name": args.name, "supervisor": os.getpid(), "pid": server.pid,
             "http": server.http, "management": server.management, "metrics": server.metrics,
             "grpc": server.grpc, "log": server.log_path,
             "binary": getattr(server, "binary", None)}
    var = args.var or re.sub(r"[^A-Za-z0-9]", "_", args.name).upper()
    fields = ("http", "management", "metrics", "grpc") if server.kind == "inferd" else ("http",)
    env = "".join(f"{var}_{k.upper()}={state[k]}\n" for k in fields + ("pid",))
    _write(base + ".env", env)
    _write(state_path, json.dumps(state))
    os.write(w, f"ready\n{env.replace(chr(10), ' ')}".encode())
    os.close(w)
    _write(exit_path, f"{_supervise(server, owner)}\n")
    os._exit(0)


def _supervise(server, owner):
    """Sleeps until SIGTERM/SIGINT/SIGHUP, the server's exit or the owner's (a script killed
    before its EXIT trap ran must not leave a server on the shared cores); then stops it."""
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops | {signal.SIGCHLD})  # after the server's fork
    while server.running() and (not owner or _alive(owner)):
        got = signal.sigtimedwait(stops | {signal.SIGCHLD}, 2)
        if got and got.si_signo in stops:
            break
    return server.stop()


def _server_options(p):
    p.add_argument("name", help="a name for its files (DIR/NAME.*) and variables")
    p.add_argument("--out", required=True, help="folder for the state file and the logs")
    p.add_argument("--var", help="prefix of the variables in NAME.env (default: NAME in capitals)")
    p.add_argument("--owner", type=int, help="stop the server when this process exits (default: "
                                             "the one that ran this command; 0: never)")
    p.add_argument("--cpus", help="taskset -c LIST")
    p.add_argument("--nice", type=int, help="nice -n N")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--timeout", type=float, default=300, help="seconds until ready, at most")
    p.add_argument("--ready-path", help="the readiness URL path (inferd: /v2/health/ready, "
                                        "peer: /ping)")


def _common(args):
    kw = {"name": args.name, "out_dir": args.out, "cpus": args.cpus, "nice": args.nice,
          "env": dict(e.split("=", 1) for e in args.env), "ready_timeout": args.timeout}
    if args.ready_path:
        kw["ready_path"] = args.ready_path
    return kw


def cmd_serve(args):
    return _start(InferdServer(store=args.store, args=args.rest, binary=args.binary, **_common(args)),
                  args)


def cmd_peer(args):
    return _start(PeerServer(args.model_dir, args.mode, app=args.app, peers=args.peers,
                             **_common(args)), args)


def _read_state(base):
    try:
        with open(_state_paths(base)[0]) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cmd_stop(args):
    failed = False
    for base in args.servers:
        base = os.path.abspath(base[:-len(".state")] if base.endswith(".state") else base)
        state, exit_path = _read_state(base), _state_paths(base)[1]
        if state is None or os.path.exists(exit_path):
            continue
        try:
            os.kill(state["supervisor"], signal.SIGTERM)
        except ProcessLookupError:  # no supervisor: stop the server's group directly
            try:
                os.killpg(state["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + args.timeout
        while _alive(state["supervisor"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        rc = open(exit_path).read().strip() if os.path.exists(exit_path) else "unknown"
        print(f"{state['name']}: exit code {rc}", file=sys.stderr)
        failed |= rc != "0"
    return 1 if args.check and failed else 0


def _alive(pid):
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# ------------------------------------------------------------------ measuring

def _series(text):
    """--series NAME or NAME{a=b,...} -> (the text, name, labels)."""
    try:
        return (text, *parse_series(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _sample(state, series):
    vals = {}
    if series and state.get("metrics"):
        samples = scrape(f"http://127.0.0.1:{state['metrics']}/metrics")
        vals = {text: metric(samples, name, **labels) for text, name, labels in series}
    return time.monotonic(), cpu_seconds(state["pid"]), loadavg()[0], vals


def _measured(state, series, argv):
    t0, c0, l0, v0 = _sample(state, series)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call(argv)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t1, c1, l1, v1 = _sample(state, series)
    load_cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return rc, {"server": state["name"], "server_cpu_s": round(c1 - c0, 3),
                "load_cpu_s": round(load_cpu, 3), "wall_s": round(t1 - t0, 3),
                "load_before": l0, "load_after": l1, "series": {k: v1[k] - v0[k] for k in v0}}


def _need_state(base):
    state = _read_state(os.path.abspath(base))
    if state is None:
        sys.exit(f"harness: no server started as {base}")
    return state


def cmd_bench(args):
    state = _need_state(args.server)
    flags = args.rest
    grpc = any(a == "--protocol=grpc" for a in flags) or any(
        a == "--protocol" and b == "grpc" for a, b in zip(flags, flags[1:]))
    url = f"grpc://127.0.0.1:{state['grpc']}" if grpc else f"http://127.0.0.1:{state['http']}"
    argv = launch_prefix(args.cpus, args.nice) + [
        args.binary or state.get("binary") or default_binary(), "bench", "--url", url]
    if args.server_metrics and state.get("metrics"):
        argv += ["--metrics-url", f"http://127.0.0.1:{state['metrics']}/metrics"]
    if args.json:
        argv += ["--json", args.json]
    rc, figures = _measured(state, args.series, argv + flags)
    if args.json and os.path.exists(args.json):
        with open(args.json) as f:
            report = json.load(f)
        report["harness"] = figures
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return rc


def cmd_measure(args):
    state = _need_state(args.server)
    if not args.rest:
        sys.exit("harness: measure needs -- COMMAND")
    rc, figures = _measured(state, args.series, args.rest)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f)
    else:
        print(json.dumps(figures))
    return rc


def cmd_proc(args):
    st = tree_stats(args.pid)
    print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in st.items()))
    return 0


def cmd_metric(args):
    labels = dict(kv.split("=", 1) for kv in args.labels)
    print(f"{metric(scrape(args.url), args.name, **labels):g}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tools.harness", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="start `inferd serve`")
    _server_options(s)
    s.add_argument("--binary", help="the inferd binary (default $INFERD or build/inferd)")
    s.add_argument("--store", help="--model-store")
    s.set_defaults(fn=cmd_serve)

    s = sub.add_parser("peer", help="start the Python peer (run.sh)")
    _server_options(s)
    s.add_argument("--model-dir", required=True)
    s.add_argument("--mode", required=True)
    s.add_argument("--app", help="text_app or xgb_app (default: the image app)")
    s.add_argument("--peers", help="the peer's folder (default $PEERS or ../shared/peers/"
                                   "fastapi_torch)")
    s.set_defaults(fn=cmd_peer)

    s = sub.add_parser("stop", help="stop started servers")
    s.add_argument("servers", nargs="+", metavar="DIR/NAME")
    s.add_argument("--timeout", type=float, default=60)
    s.add_argument("--check", action="store_true", help="fail unless every exit code is 0")
    s.set_defaults(fn=cmd_stop)

    for name, fn in (("bench", cmd_bench), ("measure", cmd_measure)):
        s = sub.add_parser(name, help=f"{name} with the server's CPU over it")
        s.add_argument("server", metavar="DIR/NAME")
        s.add_argument("--json", help="the report file")
        s.add_argument("--series", action="append", default=[], type=_series,
                       help="a /metrics series whose change to report (repeatable)")
        if name == "bench":
            s.add_argument("--binary", help="the inferd binary that runs `bench`")
            s.add_argument("--server-metrics", action="store_true",
                           help="--metrics-url of an inferd server: its own figures per step")
            s.add_argument("--cpus", help="taskset -c LIST for the load generator")
            s.add_argument("--nice", type=int, help="nice -n N for the load generator")
        s.set_defaults(fn=fn)

    s = sub.add_parser("proc", help="a process tree's processes, page faults, RSS and CPU")
    s.add_argument("pid", type=int)
    s.set_defaults(fn=cmd_proc)

    s = sub.add_parser("metric", help="the sum of a /metrics series")
    s.add_argument("url")
    s.add_argument("name")
    s.add_argument("labels", nargs="*", metavar="LABEL=VALUE")
    s.set_defaults(fn=cmd_metric)

    # What follows "--" goes to the server, to `inferd bench` or is the command to measure.
    argv = list(sys.argv[1:] if argv is None else argv)
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_args(argv[:len(argv) - len(rest) - (1 if "--" in argv else 0)])
    args.rest = rest
    return args.fn(args)

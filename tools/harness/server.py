"""InferdServer and PeerServer: start, wait until ready (one poll), stop (see __init__.py)."""

import functools
import http.client
import os
import re
import signal
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LISTENING = re.compile(r"inferd: listening http=(\d+) management=(\d+) metrics=(\d+) grpc=(\d+)")


class StartError(RuntimeError):
    """The server exited, or was not ready in time; the message ends with its log's tail."""


def default_binary():
    """$INFERD, else build/inferd of this checkout."""
    return os.path.abspath(os.environ.get("INFERD") or os.path.join(ROOT, "build", "inferd"))


def default_peers():
    """$PEERS, else ../shared/peers/fastapi_torch beside the checkout (or beside a worktree's parent)."""
    if os.environ.get("PEERS"):
        return os.path.abspath(os.environ["PEERS"])
    for up in ("..", os.path.join("..", "..")):
        path = os.path.join(ROOT, up, "shared", "peers", "fastapi_torch")
        if os.path.isfile(os.path.join(path, "run.sh")):
            return os.path.abspath(path)
    return os.path.abspath(os.path.join(ROOT, "..", "shared", "peers", "fastapi_torch"))


def free_port():
    """A port free now (the peer takes its port on the command line; inferd binds port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_prefix(cpus=None, nice=None):
    """`nice -n N taskset -c CPUS` (either may be None): both exec, so the pid is the program's."""
    prefix = []
    if nice is not None:
        prefix += ["nice", "-n", str(nice)]
    if cpus is not None:
        prefix += ["taskset", "-c", str(cpus)]
    return prefix


def http_status(port, path, timeout=5):
    """The status of GET http://127.0.0.1:port/path, None when it cannot connect."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        return r.status
    except OSError:
        return None
    finally:
        conn.close()


class ServerProcess:
    """A server process in a session of its own, with its logs under out_dir."""

    kind = "server"

    def __init__(self, name, out_dir, cpus=None, nice=None, env=None, ready_timeout=300,
                 ready_path="/v2/health/ready"):
        self.name = name
        self.out_dir = os.path.abspath(out_dir)
        self.cpus, self.nice, self.env = cpus, nice, dict(env or {})
        self.ready_timeout = ready_timeout
        self.ready_path = ready_path
        self.proc = None
        self.http = self.management = self.metrics = self.grpc = None
        self.log_path = os.path.join(self.out_dir, f"{name}.log")
        os.makedirs(self.out_dir, exist_ok=True)

    # ---- what a kind of server says
    def command(self):
        raise NotImplementedError

    def _ports(self):
        """(http, management, metrics, grpc) once known, else None."""
        raise NotImplementedError

    def _stdout_path(self):
        return self.log_path

    def _gave_up(self):
        """True once the server said it finished starting without being ready."""
        return False

    # ---- the lifecycle
    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.http}"

    @property
    def metrics_url(self):
        return f"http://127.0.0.1:{self.metrics}/metrics" if self.metrics else None

    def start(self):
        argv = launch_prefix(self.cpus, self.nice) + self.command()
        # Fresh files: a log left by an earlier run under the same name must not be read as this
        # run's (a peer has one file for both streams).
        with open(self._stdout_path(), "wb") as out, open(self.log_path, "wb") as err:
            same = self._stdout_path() == self.log_path
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT if same else err,
                                         stdin=subprocess.DEVNULL, env={**os.environ, **self.env},
                                         start_new_session=True)
        try:
            self._wait_ready()
        except BaseException:
            self.stop(timeout=10)
            raise
        return self

    def _wait_ready(self):
        """The one readiness poll: ports known, then ready_path answers 200."""
        deadline = time.monotonic() + self.ready_timeout
        while True:
            if self.http is None:
                ports = self._ports()
                if ports:
                    self.http, self.management, self.metrics, self.grpc = ports
            if self.http is not None and http_status(self.http, self.ready_path) == 200:
                return
            if self.proc.poll() is not None:
                raise StartError(f"{self.name} exited with {self.proc.returncode} before it was "
                                 f"ready\n{self.log_tail()}")
            if self.ready_path == "/v2/health/ready" and self._gave_up():
                raise StartError(f"{self.name} started but is not ready (a model failed to "
                                 f"load?)\n{self.log_tail()}")
            if time.monotonic() > deadline:
                what = "printed no ports" if self.http is None else f"GET {self.ready_path} not 200"
                raise StartError(f"{self.name} not ready in {self.ready_timeout} s ({what})\n"
                                 f"{self.log_tail()}")
            time.sleep(0.1)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=40):
        """SIGTERM to the process group; the leader's exit code, None if it had to be killed."""
        if self.proc is None:
            return None
        pgid = self.proc.pid  # start_new_session: the leader's pid is the group's id
        _signal_group(pgid, signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(pgid, signal.SIGKILL)
            self.proc.wait()
            rc = None
        # Workers that outlive their leader (a gunicorn worker busy in a forward) go too.
        end = time.monotonic() + 5
        while _group_alive(pgid) and time.monotonic() < end:
            time.sleep(0.1)
        _signal_group(pgid, signal.SIGKILL)
        return rc

    def log_tail(self, lines=20):
        text = ""
        for path in dict.fromkeys((self._stdout_path(), self.log_path)):
            try:
                with open(path, "rb") as f:
                    tail = f.read().decode("utf-8", "replace").splitlines()[-lines:]
            except OSError:
                continue
            text += f"----- {path} (last {len(tail)} lines)\n" + "\n".join(tail) + "\n"
        return text

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _signal_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


@functools.lru_cache(maxsize=None)
def _knows_flag(binary, flag):
    """Whether the binary's file holds the flag's name (its --help text is compiled in).
    Read, not run: a stand-in server (tests/tools/fake_inferd.py) would serve `--help`."""
    try:
        with open(binary, "rb") as f:
            return flag.encode() in f.read()
    except OSError:
        return False


class InferdServer(ServerProcess):
    """`inferd serve` on free ports. args: more `serve` flags (--models, --cpus, --lazy-load, ...)."""

    kind = "inferd"

    def __init__(self, store=None, args=(), binary=None, name="inferd", out_dir=".", **kw):
        super().__init__(name, out_dir, **kw)
        self.binary = os.path.abspath(binary) if binary else default_binary()
        self.store = os.path.abspath(store) if store else None
        self.args = list(args)
        self.stdout_path = os.path.join(self.out_dir, f"{name}.stdout")

    def command(self):
        store = ["--model-store", self.store] if self.store else []
        # --no-supervisor: the pid the harness measures (CPU, RSS, threads) is the
        # process that runs the models; the crash journal still marks every forward.
        # A binary from before the supervisor (an A/B's "before") has no such flag.
        quiet = ["--no-supervisor"] if _knows_flag(self.binary, "--no-supervisor") else []
        return [self.binary, "serve", *store, "--http-port", "0", "--management-port", "0",
                "--metrics-port", "0", "--grpc-port", "0", *quiet, *self.args]

    def _stdout_path(self):
        return self.stdout_path

    def _gave_up(self):
        # `serve` logs "inferd: ready=false" when every model's first load is over and some
        # failed: it will not become ready by itself, so waiting out the timeout is no use.
        try:
            with open(self.log_path, "rb") as f:
                return b"inferd: ready=false" in f.read()
        except OSError:
            return False

    def _ports(self):
        try:
            with open(self.stdout_path, "rb") as f:
                m = LISTENING.search(f.read().decode("utf-8", "replace"))
        except OSError:
            return None
        return tuple(int(g) for g in m.groups()) if m else None


class PeerServer(ServerProcess):
    """The Python peer: run.sh MODEL_DIR PORT MODE (modes: uvicorn1, gunicorn2, gunicorn2_t1,
    gunicorn2_t1_tcmalloc, reuseport2_t1_tcmalloc); app: None (images), text_app or xgb_app."""

    kind = "peer"

    def __init__(self, model_dir, mode, app=None, port=None, peers=None, name="peer",
                 out_dir=".", **kw):
        kw.setdefault("ready_path", "/ping")
        super().__init__(name, out_dir, **kw)
        self.model_dir = os.path.abspath(model_dir)
        self.mode = mode
        self.port = port
        self.run_sh = os.path.join(peers or default_peers(), "run.sh")
        if app:
            self.env["APP"] = app

    def command(self):
        return ["bash", self.run_sh, self.model_dir, str(self.port), self.mode]

    def start(self):
        if not os.path.isfile(self.run_sh):
            raise StartError(f"no Python peer at {self.run_sh} (set PEERS)")
        if self.port is None:
            self.port = free_port()
        return super().start()

    def _ports(self):
        return (self.port, None, None, None)

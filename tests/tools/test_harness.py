"""tools/harness against a fake server (fake_inferd.py): start-up line, the one readiness poll,
exit codes, the peer's process group, CPU of a process tree, /metrics, and the CLI's
supervisor. No inferd binary and no model needed."""

import json
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
from tools.harness import InferdServer, PeerServer, StartError, cpu_seconds, metric  # noqa: E402
from tools.harness.probes import parse  # noqa: E402
from tools.harness.server import http_status  # noqa: E402

FAKE = os.path.join(HERE, "fake_inferd.py")


def fake(tmp_path, *flags, **kw):
    return InferdServer(store=tmp_path, args=flags, binary=FAKE, name="fake", out_dir=tmp_path,
                        ready_timeout=kw.pop("ready_timeout", 20), **kw)


def test_start_reads_the_ports_and_waits_for_ready(tmp_path):
    server = fake(tmp_path, "--ready-after", "0.5").start()
    try:
        assert all(isinstance(p, int) for p in (server.http, server.management, server.metrics,
                                                server.grpc))
        assert http_status(server.http, "/v2/health/ready") == 200
        assert server.metrics_url.endswith(f":{server.metrics}/metrics")
    finally:
        assert server.stop() == 0
    assert not server.running()


def test_stop_returns_the_exit_code(tmp_path):
    with fake(tmp_path, "--exit-code", "7") as server:
        pass
    assert server.proc.returncode == 7
    assert server.stop() == 7


def test_a_server_that_exits_is_reported_with_its_log(tmp_path):
    with pytest.raises(StartError, match=r"(?s)exited with 3 before it was ready.*refusing to start"):
        fake(tmp_path, "--die").start()


def test_a_server_never_ready_times_out_and_is_stopped(tmp_path):
    server = fake(tmp_path, "--ready-after", "600", ready_timeout=1)
    with pytest.raises(StartError, match="not ready in 1 s"):
        server.start()
    assert not server.running()


def test_taskset_and_nice(tmp_path):
    with fake(tmp_path, cpus="0", nice=5) as server:
        with open(f"/proc/{server.pid}/status") as f:
            assert "Cpus_allowed_list:\t0\n" in f.read()
        with open(f"/proc/{server.pid}/stat") as f:
            assert int(f.read().rsplit(")", 1)[1].split()[16]) >= 5


def peer_dir(tmp_path):
    peers = tmp_path / "peers"
    peers.mkdir()
    (peers / "run.sh").write_text(f'exec "{sys.executable}" "{FAKE}" peer "$@"\n')
    return peers


def running(pid):
    """Neither gone nor a zombie (whoever reaps orphans here may take a while)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(pid):
    out = []
    for e in os.listdir("/proc"):
        try:
            with open(f"/proc/{e}/stat") as f:
                if e.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(e))
        except OSError:
            pass
    return out


def test_peer_is_polled_on_ping_and_stopped_with_its_workers(tmp_path):
    server = PeerServer(tmp_path, "uvicorn1", app="text_app", peers=peer_dir(tmp_path),
                        name="peer", out_dir=tmp_path, ready_timeout=20).start()
    try:
        assert http_status(server.http, "/ping") == 200
        deadline = time.monotonic() + 10
        while not children(server.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = children(server.pid)
        assert workers
        assert cpu_seconds(server.pid) > 0  # the interpreters' start-up, the worker's included
    finally:
        server.stop()
    assert not any(running(w) for w in workers)


def test_cpu_seconds_counts_the_tree(tmp_path):
    burn = "import time; t = time.process_time(); exec('while time.process_time() - t < 0.3: pass')"
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {burn!r}]).wait(); time.sleep(5)"])
    try:
        time.sleep(1.5)
        assert cpu_seconds(parent.pid) >= 0.3
    finally:
        parent.kill()
        parent.wait()
    assert cpu_seconds(parent.pid) == 0.0  # gone


def test_metric_sums_a_series_by_labels():
    samples = parse('# HELP x\nx_total{model="a",code="200"} 3\nx_total{model="b"} 4\ny 1.5\n')
    assert metric(samples, "x_total") == 7
    assert metric(samples, "x_total", model="a") == 3
    assert metric(samples, "y") == 1.5
    assert metric(samples, "z") == 0


def harness(*args, **kw):
    return subprocess.run([sys.executable, "-m", "tools.harness", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, **kw)


def test_cli_starts_measures_and_stops(tmp_path):
    r = harness("serve", "srv", "--out", str(tmp_path), "--binary", FAKE, "--",
                "--ready-after", "0.3")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and "srv ready" in r.stderr
    env = dict(line.split("=", 1) for line in (tmp_path / "srv.env").read_text().split())
    assert set(env) == {"SRV_HTTP", "SRV_MANAGEMENT", "SRV_METRICS", "SRV_GRPC", "SRV_PID"}
    assert http_status(int(env["SRV_HTTP"]), "/v2/health/ready") == 200
    state = json.loads((tmp_path / "srv.state").read_text())
    assert state["pid"] == int(env["SRV_PID"])

    r = harness("measure", str(tmp_path / "srv"), "--series", "fake_requests_total{model=m}",
                "--", "true")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["series"] == {"fake_requests_total{model=m}": 1}  # the first scrape
    assert figures["server_cpu_s"] >= 0

    r = harness("stop", str(tmp_path / "srv"), str(tmp_path / "never_started"), "--check")
    assert r.returncode == 0, r.stderr
    assert "srv: exit code 0" in r.stderr
    assert not running(state["supervisor"])
    assert not running(state["pid"])
    assert harness("stop", str(tmp_path / "srv")).stderr == ""  # already stopped: nothing to do


def test_cli_start_failure_prints_the_log(tmp_path):
    r = harness("serve", "bad", "--out", str(tmp_path), "--binary", FAKE, "--", "--die")
    assert r.returncode == 1
    assert "exited with 3" in r.stderr and "refusing to start" in r.stderr
    assert r.stdout == ""


def test_cli_peer_prints_http_and_pid(tmp_path):
    r = harness("peer", "p", "--out", str(tmp_path), "--model-dir", str(tmp_path), "--mode",
                "gunicorn2", "--peers", str(peer_dir(tmp_path)))
    assert r.returncode == 0, r.stderr
    env = (tmp_path / "p.env").read_text()
    assert sorted(line.split("=")[0] for line in env.split()) == ["P_HTTP", "P_PID"]
    assert harness("stop", str(tmp_path / "p")).returncode == 0


def test_cli_proc_prints_the_tree():
    r = harness("proc", str(os.getpid()))
    fields = dict(kv.split("=") for kv in r.stdout.split())
    assert set(fields) == {"procs", "minflt", "majflt", "rss_bytes", "cpu_s"}
    assert int(fields["procs"]) >= 2 and int(fields["rss_bytes"]) > 0  # pytest and the CLI


def test_cli_server_goes_with_its_owner(tmp_path):
    owner = subprocess.Popen(["sleep", "60"])
    r = harness("serve", "orphan", "--out", str(tmp_path), "--binary", FAKE, "--owner",
                str(owner.pid))
    assert r.returncode == 0, r.stderr
    state = json.loads((tmp_path / "orphan.state").read_text())
    assert running(state["pid"])
    owner.kill()
    owner.wait()
    deadline = time.monotonic() + 15
    while not (tmp_path / "orphan.exit").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (tmp_path / "orphan.exit").read_text() == "0\n"
    assert not running(state["pid"])


def test_parse_series():
    from tools.harness import parse_series
    assert parse_series("x_total") == ("x_total", {})
    assert parse_series('x_total{result="hit", model=m}') == ("x_total", {"result": "hit", "model": "m"})
    with pytest.raises(ValueError):
        parse_series("not a series{")


def test_a_server_that_gave_up_fails_at_once(tmp_path):
    start = time.monotonic()
    with pytest.raises(StartError, match="started but is not ready"):
        fake(tmp_path, "--never-ready", ready_timeout=60).start()
    assert time.monotonic() - start < 30


def test_a_log_of_an_earlier_run_is_not_read_as_this_one(tmp_path):
    (tmp_path / "fake.log").write_text("inferd: ready=false\n")  # left by a run that failed
    with fake(tmp_path) as server:
        assert http_status(server.http, "/v2/health/ready") == 200

"""Fixtures of the end-to-end tests: the binary (INFERD_BIN), the test model
store made by tools/make_models.py in a tmp dir, extra models written here with
torch.jit.script, the example store (INFERD_EXAMPLE_STORE) and servers of the
real binary on free ports. A server's teardown sends SIGTERM and asserts exit
code 0; a failed test gets the logs of the running servers in its report.

INFERD_E2E_CPUS=LIST (taskset's list, e.g. 0) runs every start of the binary
confined to those cores, as a slower machine would run it (`make test-slow`):
a test must not depend on the machine's speed or its number of cores, so the
suite passes that way too.
"""

import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inferd_e2e import Server  # noqa: E402

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEST_MODELS = ["identity_fp32", "two_io", "dict_out", "all_dtypes", "thrower", "slow", "tiny_cnn"]

torch.set_num_threads(1)


# ------------------------------------------------------------------ locations

@pytest.fixture(scope="session")
def inferd_bin():
    path = os.environ.get("INFERD_BIN")
    if not path:
        pytest.fail("INFERD_BIN is not set: point it at the built binary (build/inferd); "
                    "ctest sets it", pytrace=False)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"INFERD_BIN={path} is not an executable file: build the `inferd` target",
                    pytrace=False)
    path = os.path.abspath(path)
    cpus = os.environ.get("INFERD_E2E_CPUS")
    if not cpus:
        yield path
        return
    # A wrapper that execs the binary under taskset: the process keeps the pid
    # the tests see, and every test starts it the way it always does. Outside
    # pytest's private tmp dir, so that a test running it as another user
    # (test_optimize's read-only store) can too.
    folder = tempfile.mkdtemp(prefix="inferd-confined-")
    os.chmod(folder, 0o755)
    wrapper = os.path.join(folder, "inferd")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec taskset -c {shlex.quote(cpus)} {shlex.quote(path)} "$@"\n')
    os.chmod(wrapper, 0o755)
    try:
        yield wrapper
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def out_dir(inferd_bin):
    """Where the suite writes its figures (the build dir by default)."""
    d = os.environ.get("INFERD_E2E_OUT") or os.path.dirname(os.environ["INFERD_BIN"])
    os.makedirs(d, exist_ok=True)
    return d


@pytest.fixture(scope="session")
def test_store(tmp_path_factory):
    """The test model store of tools/make_models.py --test-store (do not modify).

    A copy of INFERD_TEST_STORE when it is set (ctest's make_test_store made it
    once for every worker: making it costs each worker ~45 s of CPU), made
    here otherwise."""
    store = tmp_path_factory.mktemp("test-store")
    made = os.environ.get("INFERD_TEST_STORE")
    if made:
        shutil.copytree(made, store, dirs_exist_ok=True)
    else:
        cmd = ["/usr/bin/python3", os.path.join(SOURCE_DIR, "tools", "make_models.py"),
               "--test-store", str(store), "--threads", "1"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (f"{' '.join(cmd)} failed ({r.returncode}):\n"
                                   f"{r.stdout}\n{r.stderr}")
    origin = f"INFERD_TEST_STORE={made}" if made else "make_models"
    for m in TEST_MODELS:
        assert os.path.exists(store / m / "1" / "model.pt"), f"{origin} has no {m}"
        assert os.path.exists(store / m / "config.yaml"), f"{origin} has no {m}/config.yaml"
    return store


@pytest.fixture(scope="session")
def example_store():
    store = os.environ.get("INFERD_EXAMPLE_STORE") or os.path.join(SOURCE_DIR, "examples",
                                                                   "model-store")
    for m in ("digits_cnn", "resnet18", "mobilenet_v3_small"):
        p = os.path.join(store, m, "1", "model.pt")
        if not os.path.exists(p):
            pytest.fail(f"{p} is missing: build the example store with `make models` "
                        f"(INFERD_EXAMPLE_STORE={store})", pytrace=False)
    return store


# --------------------------------------------------------- stores and models

def copy_model(src_store, name, dst_store, new_name=None, config=None, extra_config=""):
    """Copies model `name` (config + versions) into dst_store, optionally renamed,
    with its config replaced by `config` or extended by `extra_config` lines."""
    dst = os.path.join(dst_store, new_name or name)
    shutil.copytree(os.path.join(src_store, name), dst)
    if config is not None or extra_config:
        path = os.path.join(dst, "config.yaml")
        with open(path) as f:
            text = f.read()
        text = config if config is not None else text + extra_config
        with open(path, "w") as f:
            f.write(text)
    return dst


def write_model(store, name, module, config, version=1):
    d = os.path.join(store, name)
    os.makedirs(os.path.join(d, str(version)), exist_ok=True)
    module.save(os.path.join(d, str(version), "model.pt"))
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write(config)
    return d


class MixedIO(torch.nn.Module):
    """A model no other test or tool has seen: two inputs of different datatypes,
    two outputs of different datatypes, variable batch and a variable dim."""

    def forward(self, features: torch.Tensor, weights: torch.Tensor):
        projected = (features * weights.to(torch.float32).unsqueeze(1)).sum(-1)
        total = weights.to(torch.int64).sum(-1, keepdim=True) * 3 - 7
        return projected, total


MIXED_IO_CONFIG = """\
# mixed_io: written by tests/e2e/conftest.py
backend: torchscript
max_batch_size: 6
inputs:
  - {name: features, datatype: FP32, shape: [-1, 3]}
  - {name: weights, datatype: INT32, shape: [3]}
outputs:
  - {name: projected, datatype: FP32, shape: [-1]}
  - {name: total, datatype: INT64, shape: [1]}
"""


@pytest.fixture(scope="session")
def main_store(test_store, tmp_path_factory):
    """The test models plus mixed_io; every model loads."""
    store = tmp_path_factory.mktemp("main-store")
    for m in TEST_MODELS:
        copy_model(test_store, m, store)
    write_model(store, "mixed_io", torch.jit.script(MixedIO()), MIXED_IO_CONFIG)
    return store


def load_reference(store, name, version=1):
    return torch.jit.load(os.path.join(str(store), name, str(version), "model.pt")).eval()


# ------------------------------------------------------------------- servers

@pytest.fixture(scope="session")
def server_factory(inferd_bin, tmp_path_factory):
    """start(store, name, args=(), wait_ready=True, drain_timeout=10) -> Server.
    Servers still running at the end of the scope are stopped and must exit 0."""
    started = []

    def start(store, name, args=(), wait_ready=True, drain_timeout=10):
        workdir = tmp_path_factory.mktemp(f"server-{name}")
        s = Server(inferd_bin, store, workdir, name=name, args=args, drain_timeout=drain_timeout)
        started.append(s)
        return s.start(wait_ready=wait_ready)

    yield start
    problems = []
    for s in started:
        if s.running():
            rc = s.stop()
            if rc != 0:
                problems.append(f"{s.name}: exit code {rc} after SIGTERM\n{s.logs()}")
    assert not problems, "\n".join(problems)


def stop_and_check(server):
    rc = server.stop()
    assert rc == 0, (f"{server.name} answered SIGTERM with exit code {rc} (None: did not exit "
                     f"within {server.drain_timeout + 2} s)\n{server.logs()}")


@pytest.fixture(scope="session")
def main_server(server_factory, main_store):
    s = server_factory(main_store, "main")
    yield s
    stop_and_check(s)


@pytest.fixture(scope="session")
def refs(main_store):
    """name -> the TorchScript module the server serves, loaded in Python."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = load_reference(main_store, name)
        return cache[name]

    return get


# ---------------------------------------------------------------------- gRPC

@pytest.fixture(scope="session")
def grpc_modules(tmp_path_factory):
    """(messages, services): the Python client generated from src/grpc/grpc_predict_v2.proto."""
    from grpc_e2e import generate_client
    return generate_client(str(tmp_path_factory.mktemp("grpc-client")))


@pytest.fixture(scope="session")
def main_grpc(main_server, grpc_modules):
    """A gRPC client of main_server."""
    from grpc_e2e import GrpcClient
    assert main_server.grpc, "the server printed no grpc= port"
    client = GrpcClient(*grpc_modules, main_server.grpc)
    yield client
    client.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for s in list(Server.LIVE):
            report.sections.append((f"inferd server '{s.name}' logs", s.logs(6000)))

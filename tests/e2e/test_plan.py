"""`inferd plan`, the real binary: a generated fleet packed within 10% of the
lower bound with every constraint checked here (tools/plan_sim.py's checker);
bad files answered with the line and exit 2; the emitted objects read back
with PyYAML (as Kubernetes' YAML reader types them); and a node's Deployment
command line, taken from the emitted YAML, started as a real server whose
readiness and liveness probe paths answer 200.
"""

import glob
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import yaml

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import Server

sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
import plan_models  # noqa: E402
import plan_sim  # noqa: E402

GI = 2**30


def plan(inferd_bin, models_file, *args):
    return subprocess.run([inferd_bin, "plan", "--models", str(models_file), "--node-cores", "16",
                           "--node-memory", "64Gi", *args], capture_output=True, text=True,
                          timeout=120)


def test_three_thousand_models_within_ten_percent_of_the_bound(inferd_bin, tmp_path):
    models = plan_models.generate(3000, "balanced", 5)
    path = tmp_path / "models.yaml"
    with open(path, "w") as f:
        plan_models.write_yaml(models, f)
    r = plan(inferd_bin, path, "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    rounded = [(n, float(f"{rps:.3f}"), float(f"{c:.3f}"), m) for n, rps, c, m in models]
    replicas, lb = plan_sim.check_plan(result, rounded, 16, 64 * GI, 0.2)
    assert replicas > 3000  # the hottest models were split
    assert lb <= len(result["nodes"]) <= 1.1 * lb


def test_bad_files_name_the_line_and_exit_2(inferd_bin, tmp_path):
    cases = {
        "models:\n  - {name: a, rps: 1, core_ms: 1, memory: 1M}\n  - {name: b, rps: 1, cores: 2, memory: 1M}\n":
            ":3: model 'b': unknown key 'cores'",
        "models:\n  - {name: a, rps: 1, core_ms: -1, memory: 1M}\n": ":2: model 'a': core_ms: must not be negative",
        "models:\n  - {name: a, rps: 1, memory: 1M}\n": ":2: model 'a': missing `core_ms`",
        "models:\n  - {name: a, rps: 1, core_ms: 1, memory: 100Gi}\n": ":2: model 'a': fits on no node even alone",
    }
    for text, expected in cases.items():
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        r = plan(inferd_bin, path)
        assert r.returncode == 2, (text, r.returncode, r.stderr)
        assert str(path) + expected in r.stderr, (text, r.stderr)
        assert r.stdout == ""


def emit(inferd_bin, tmp_path, text):
    path = tmp_path / "models.yaml"
    path.write_text(text)
    out = tmp_path / "k8s"
    r = plan(inferd_bin, path, "--emit-k8s", str(out), "--image", "registry.example/inferd:1")
    assert r.returncode == 0, r.stderr
    docs = []
    for f in sorted(glob.glob(str(out / "**" / "*.yaml"), recursive=True)):
        if not f.endswith("kustomization.yaml"):
            with open(f) as fh:
                docs += [d for d in yaml.safe_load_all(fh) if d]
    return docs


TEST_MODELS = ("models:\n"
               "  - {name: identity_fp32, rps: 100, core_ms: 1, memory: 10Mi}\n"
               "  - {name: tiny_cnn, rps: 2000, core_ms: 10, memory: 50Mi}\n"
               "  - {name: two_io, rps: 10, core_ms: 2, memory: 10Mi}\n")


def test_emitted_objects_carry_every_field_with_the_right_types(inferd_bin, tmp_path):
    docs = emit(inferd_bin, tmp_path, TEST_MODELS)
    kinds = [d["kind"] for d in docs]
    # tiny_cnn needs 20 cores: two replicas on two nodes.
    for kind in ("Deployment", "Service", "ConfigMap", "HorizontalPodAutoscaler"):
        assert kinds.count(kind) == 2, kinds
    assert kinds.count("HTTPRoute") == 3 and kinds.count("Gateway") == 1
    assert kinds.count("ServingRuntime") == 1 and kinds.count("InferenceService") == 1
    for d in docs:
        assert isinstance(d["apiVersion"], str) and isinstance(d["metadata"]["name"], str), d
    for d in (d for d in docs if d["kind"] == "Deployment"):
        pod = d["spec"]["template"]["spec"]
        c = pod["containers"][0]
        assert c["image"] == "registry.example/inferd:1"
        assert all(isinstance(a, str) for a in c["args"]), c["args"]
        assert c["resources"]["requests"] == c["resources"]["limits"]
        assert all(isinstance(v, str) for v in c["resources"]["limits"].values())
        assert all(isinstance(p["containerPort"], int) for p in c["ports"])
        assert c["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
        assert c["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
        drain = int(c["args"][c["args"].index("--drain-timeout") + 1])
        assert pod["terminationGracePeriodSeconds"] > drain + int(c["lifecycle"]["preStop"]["exec"]["command"][1])
    routes = {d["metadata"]["annotations"]["inferd.dev/model"]: d for d in docs if d["kind"] == "HTTPRoute"}
    assert len(routes["tiny_cnn"]["spec"]["rules"][0]["backendRefs"]) == 2
    hpa = next(d for d in docs if d["kind"] == "HorizontalPodAutoscaler")
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == "inferd_queue_depth"
    assert isinstance(hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"], str)


def test_a_deployments_command_line_serves_and_answers_its_probes(inferd_bin, test_store, tmp_path):
    docs = emit(inferd_bin, tmp_path, TEST_MODELS)
    deployment = next(d for d in docs if d["kind"] == "Deployment"
                      and d["metadata"]["name"].endswith("node-0001"))
    c = deployment["spec"]["template"]["spec"]["containers"][0]
    config_map = next(d for d in docs if d["kind"] == "ConfigMap" and
                      d["metadata"]["name"] == c["env"][0]["valueFrom"]["configMapKeyRef"]["name"])
    models = config_map["data"][c["env"][0]["valueFrom"]["configMapKeyRef"]["key"]]
    # What Kubernetes would run, with the store of this test and ports chosen by the kernel.
    args = [a.replace("$(INFERD_MODELS)", models) for a in c["args"]]
    args[args.index("--model-store") + 1] = str(test_store)
    args[args.index("--bind") + 1] = "127.0.0.1"
    for flag in ("--http-port", "--management-port", "--metrics-port"):
        args[args.index(flag) + 1] = "0"
    # The gRPC port (default 8001) too, so that concurrent test runs do not collide.
    if "--grpc-port" in args:
        args[args.index("--grpc-port") + 1] = "0"
    else:
        args += ["--grpc-port", "0"]
    args[args.index("--drain-timeout") + 1] = "10"
    # The Secret's file, as the pod mounts it; the probes need no key.
    key = "plan-test-key-0123456789"
    (tmp_path / "keys.yaml").write_text(f"inference: [{key}]\n")
    args[args.index("--auth-keys") + 1] = str(tmp_path / "keys.yaml")
    keyed = {"Authorization": f"Bearer {key}"}
    server = Server(inferd_bin, test_store, tmp_path / "server", name="plan-node-0001")
    server.command = lambda: [inferd_bin, *args]
    server.start()
    try:
        for probe in ("readinessProbe", "livenessProbe"):
            url = f"http://127.0.0.1:{server.http}{c[probe]['httpGet']['path']}"
            assert urllib.request.urlopen(url, timeout=10).status == 200, probe
        # The node's models are loaded; the store's others are not.
        for m in models.split(","):
            url = f"http://127.0.0.1:{server.http}/v2/models/{m}/ready"
            req = urllib.request.Request(url, headers=keyed)
            assert urllib.request.urlopen(req, timeout=10).status == 200, m
        try:
            urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{server.http}/v2/models/slow/ready", headers=keyed), timeout=10)
            raise AssertionError("slow is not on node-0001 but is ready")
        except urllib.error.HTTPError as e:
            assert e.code in (404, 503), e.code
    finally:
        stop_and_check(server)

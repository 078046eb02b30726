"""Process metrics on the metrics port (the names Prometheus clients use), and
the allocator's promise measured through them: a warm server serving a convnet
with batches of several sizes adds no page faults per request."""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import SOURCE_DIR, copy_model, stop_and_check
from inferd_e2e import call, get, metric_sum, parse_metrics


def scrape(server):
    r = get(server.metrics, "/metrics")
    assert r.status == 200, r
    return parse_metrics(r.body.decode())


def one(samples, name, **labels):
    found = [v for n, l, v in samples
             if n == name and all(l.get(k) == str(val) for k, val in labels.items())]
    assert len(found) == 1, f"expected one {name}{labels} in /metrics, found {found}"
    return found[0]


def allocator(samples):
    names = [l["allocator"] for n, l, _ in samples if n == "inferd_allocator_info"]
    assert len(names) == 1, f"inferd_allocator_info: {names}"
    return names[0]


def test_process_series_are_exported(main_server):
    samples = scrape(main_server)
    pid = main_server.pid
    with open(f"/proc/{pid}/status") as f:
        rss_kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    rss = one(samples, "process_resident_memory_bytes")
    assert 0.5 * rss_kb * 1024 < rss < 2 * rss_kb * 1024, (rss, rss_kb)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    assert abs(one(samples, "process_open_fds") - fds) <= 4, fds
    assert one(samples, "process_max_fds") >= fds
    assert one(samples, "process_cpu_seconds_total") > 0
    assert one(samples, "process_start_time_seconds") > 1.6e9
    assert one(samples, "inferd_process_page_faults_total", kind="minor") > 0
    assert one(samples, "inferd_process_page_faults_total", kind="major") >= 0
    assert allocator(samples) in ("tcmalloc", "jemalloc", "glibc", "system")


@pytest.fixture(scope="module")
def mobilenet_server(server_factory, example_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("faults-store")
    copy_model(example_store, "mobilenet_v3_small", store)
    s = server_factory(store, "faults")
    yield s
    stop_and_check(s)


def test_warm_server_adds_no_page_faults_per_request(mobilenet_server):
    """4 clients at once make batches of 1 to 4 images. A batch size's first
    run faults (oneDNN generates kernels for the new shape), so the test sends
    windows of 48 requests until one adds fewer than 1 minor page fault per
    request, at most 6 windows. With glibc's defaults every batch of 2 or more
    faults about a thousand times (activations are unmapped on free and faulted
    in again), in every window."""
    s = mobilenet_server
    if allocator(scrape(s)) == "system":
        pytest.skip("built with INFERD_ALLOCATOR=system (sanitizer build): glibc defaults fault")
    with open(os.path.join(SOURCE_DIR, "examples", "images", "cat.jpg"), "rb") as f:
        jpeg = f.read()

    def send(_):
        r = call(s.http, "POST", "/predictions/mobilenet_v3_small", jpeg,
                 {"Content-Type": "image/jpeg"})
        assert r.status == 200, r

    windows = []
    with ThreadPoolExecutor(4) as pool:
        for _ in range(6):
            before = scrape(s)
            list(pool.map(send, range(48)))
            after = scrape(s)
            faults = (one(after, "inferd_process_page_faults_total", kind="minor") -
                      one(before, "inferd_process_page_faults_total", kind="minor"))
            batches = (metric_sum(after, "inferd_batch_size_count") -
                       metric_sum(before, "inferd_batch_size_count"))
            windows.append(f"{faults:.0f} faults in {batches:.0f} batches")
            if faults < 48:
                return
    raise AssertionError("minor page faults per window of 48 requests never fell below 48 on "
                         "a warm server: " + "; ".join(windows))

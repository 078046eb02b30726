"""The dashboard on the management port (issue 29) in a real browser: Debian's
headless Chromium driven through chromium-driver and python3-selenium
(scripts/setup.sh installs them; without them these tests fail, they do not
skip). The page must list every model with its state, show a request count
rising after traffic without a reload, fetch nothing from another origin, log
no console error, and stay usable with 1,000 models (paged on the server).
"""

import json
import os

import pytest
import torch

from dashboard_browser import MissingBrowser, requested_urls, start_chromium, wait_ready
from inferd_e2e import assert_same, call, get, infer_json, parse_infer_response, wait_until


@pytest.fixture
def browser(tmp_path):
    try:
        driver = start_chromium(tmp_path / "profile")
    except MissingBrowser as e:
        pytest.fail(str(e), pytrace=False)
    yield driver
    driver.quit()


def open_dashboard(driver, port):
    """Loads the page through `/` (the redirect) and waits for its first render;
    returns the in-page milliseconds from navigation start to that render."""
    # What the browser fetched on its own before (its new tab page) is not the page's.
    driver.get("about:blank")
    driver.get_log("performance")
    driver.get(f"http://127.0.0.1:{port}/")
    wait_ready(driver, wait_until)
    assert driver.current_url.endswith("/dashboard"), driver.current_url
    return float(driver.execute_script("return document.body.dataset.readyMs"))


def cell(driver, model, field):
    return driver.execute_script(
        "const r = document.querySelector(`tr[data-model=\"${arguments[0]}\"]`);"
        "if (!r) return null;"
        "const c = r.querySelector(`[data-field=\"${arguments[1]}\"]`);"
        "return c ? (c.dataset.value !== undefined ? c.dataset.value : c.textContent) : null;",
        model, field)


def other_origin_requests(driver, port):
    """URLs the page asked for that are not this server (CDP network log and the
    page's own resource timing)."""
    origin = f"http://127.0.0.1:{port}/"
    urls = requested_urls(driver)
    assert urls, "the network log is empty: CDP logging did not work"
    return [u for u in urls if not (u.startswith(origin) or u.startswith("data:"))]


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def test_page_and_state_over_plain_http(main_server):
    port = main_server.management
    r = call(port, "GET", "/")
    assert r.status == 302 and r.headers.get("location") == "/dashboard", r
    page = get(port, "/dashboard")
    assert page.status == 200 and "text/html" in page.headers["content-type"]
    assert "default-src 'none'" in page.headers["content-security-policy"]
    js = get(port, "/dashboard/dashboard.js")
    assert js.status == 200 and "text/javascript" in js.headers["content-type"]
    state = get(port, "/dashboard/state").json()
    listed = {m["modelName"]: m["state"] for m in get(port, "/models").json()["models"]}
    assert {m["name"]: m["state"] for m in state["models"]} == listed
    assert state["node"]["usable_cores"] >= 1 and state["node"]["executors"]
    bad = get(port, "/dashboard/state?limit=0")
    assert bad.status == 400 and "limit=0" in bad.error(), bad


def test_dashboard_in_chromium(main_server, browser, out_dir):
    """Every model with its state; requests rising after traffic with no reload;
    nothing from another origin; no console error; a screenshot."""
    port = main_server.management
    ready_ms = open_dashboard(browser, port)
    listed = {m["modelName"]: m["state"] for m in get(port, "/models").json()["models"]}
    assert listed
    for name, state in listed.items():
        wait_until(lambda: cell(browser, name, "state") == state, 10,
                   f"{name} shown as {state} (page says {cell(browser, name, 'state')})")

    browser.execute_script("window.__notReloaded = 42")
    before = float(cell(browser, "identity_fp32", "requests"))
    x = torch.tensor([[1.0, -2.0, 3.5]])
    n = 12
    for _ in range(n):
        _, outputs = parse_infer_response(infer_json(main_server.http, "identity_fp32",
                                                     [("input", x)]))
        assert_same(next(iter(outputs.values())), x)  # the identity model gives x back
    wait_until(lambda: float(cell(browser, "identity_fp32", "requests")) >= before + n, 15,
               f"requests of identity_fp32 to reach {before + n} on the page")
    assert browser.execute_script("return window.__notReloaded") == 42, "the page reloaded"
    wait_until(lambda: cell(browser, "identity_fp32", "p99_ms") not in (None, ""), 10,
               "a p99 for identity_fp32")
    assert int(browser.execute_script("return document.body.dataset.updates")) >= 2

    browser.save_screenshot(os.path.join(out_dir, "dashboard.png"))
    assert other_origin_requests(browser, port) == []
    assert console_errors(browser) == []
    with open(os.path.join(out_dir, "dashboard_ready.json"), "w") as f:
        json.dump({"models": len(listed), "ready_ms": ready_ms}, f)


def test_a_thousand_models_are_paged(server_factory, test_store, tmp_path_factory, browser,
                                     out_dir):
    """1,000 lazily loaded copies of one small model: the page shows one page
    of rows, ready within 2 s of navigation; the filter finds the last one,
    which shows READY with its request after one inference."""
    store = tmp_path_factory.mktemp("thousand-store")
    src = os.path.join(str(test_store), "identity_fp32")
    with open(os.path.join(src, "config.yaml")) as f:
        config = f.read() + "\nload: lazy\n"
    for i in range(1000):
        d = os.path.join(str(store), f"m{i:04d}")
        os.makedirs(os.path.join(d, "1"))
        os.link(os.path.join(src, "1", "model.pt"), os.path.join(d, "1", "model.pt"))
        with open(os.path.join(d, "config.yaml"), "w") as f:
            f.write(config)
    s = server_factory(store, "thousand", wait_ready=False)
    port = s.management

    ready_ms = open_dashboard(browser, port)
    rows = browser.execute_script("return document.querySelectorAll('tr[data-model]').length")
    assert rows == 50, f"{rows} rows rendered for one page"
    assert browser.find_element("id", "page-info").text == "1–50 of 1000"
    assert ready_ms < 2000, f"page ready {ready_ms:.0f} ms after navigation with 1,000 models"

    search = browser.find_element("id", "filter")
    search.send_keys("m0999")
    wait_until(lambda: cell(browser, "m0999", "state") == "UNAVAILABLE", 10, "m0999 listed")
    x = torch.tensor([[0.5, 1.5, -3.0]])
    _, outputs = parse_infer_response(infer_json(s.http, "m0999", [("input", x)]))
    assert_same(next(iter(outputs.values())), x)
    wait_until(lambda: cell(browser, "m0999", "state") == "READY"
               and cell(browser, "m0999", "requests") == "1", 15,
               "m0999 READY with 1 request on the page")
    assert other_origin_requests(browser, port) == []
    assert console_errors(browser) == []
    with open(os.path.join(out_dir, "dashboard_ready_1000.json"), "w") as f:
        json.dump({"models": 1000, "ready_ms": ready_ms}, f)

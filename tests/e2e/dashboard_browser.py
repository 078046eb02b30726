"""Headless Chromium for the dashboard, shared by tests/e2e/test_dashboard.py
and tools/bench_dashboard.py: Debian's chromium and chromium-driver through
python3-selenium (scripts/setup.sh installs them), with a fresh profile and
no background traffic of its own, so that every request it makes is the
page's. Raises MissingBrowser (never skips) when a part is not installed.
With --auth-keys the page asks for a key: wait_key_form, enter_key."""

import json
import os

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1500,1000")


class MissingBrowser(RuntimeError):
    pass


def start_chromium(profile_dir):
    """A selenium driver of a fresh headless Chromium whose browser console and
    CDP network events are logged (get_log('browser'), get_log('performance'))."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        raise MissingBrowser(f"python3-selenium is missing ({e}): run scripts/setup.sh")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            raise MissingBrowser(f"{path} is missing: run scripts/setup.sh "
                                 "(it installs chromium and chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS + (f"--user-data-dir={profile_dir}",):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    return driver


def wait_ready(driver, wait_until, timeout=20):
    wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "1",
               timeout, "the dashboard's first render")


def wait_key_form(driver, wait_until, timeout=20):
    """Until the page shows its API key form (a data route answered 401/403)."""
    wait_until(lambda: driver.execute_script(
        "const p = document.getElementById('key-panel'); return !!p && !p.hidden"),
        timeout, "the dashboard's API key form")


def key_error(driver):
    """The text under the key form: the server's refusal of the key, or ''."""
    return driver.execute_script(
        "const e = document.getElementById('key-error'); return e && !e.hidden ? e.textContent : ''")


def enter_key(driver, key):
    """Types `key` into the key form and presses Enter, as a user would."""
    from selenium.webdriver.common.keys import Keys
    field = driver.find_element("id", "key-input")
    field.clear()
    field.send_keys(key, Keys.ENTER)


def sent_requests(driver):
    """(url, request headers) of every request the browser sent since the last
    read of the CDP network log."""
    sent = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            request = msg["params"]["request"]
            sent.append((request["url"], request.get("headers", {})))
    return sent


def requested_urls(driver):
    """Every URL the browser asked for since the last call (CDP network log)
    plus the page's resource timing entries."""
    urls = [url for url, _ in sent_requests(driver)]
    urls += driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    return urls

#!/usr/bin/env python3
"""Takes docs/dashboard.png: the example store (make models) served with a
memory budget, some traffic to each model for a minute so that the plots have
something to show, then a headless Chromium screenshot of /dashboard.

  /usr/bin/python3 tools/dashboard_screenshot.py   (env: INFERD=build/inferd
      STORE=examples/model-store SECONDS=60 OUT=docs/dashboard.png)
"""

import os
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from dashboard_browser import start_chromium, wait_ready  # noqa: E402
from harness import InferdServer  # noqa: E402
from inferd_e2e import call, wait_until  # noqa: E402

INFERD = os.path.abspath(os.environ.get("INFERD", os.path.join(ROOT, "build", "inferd")))
STORE = os.path.abspath(os.environ.get("STORE", os.path.join(ROOT, "examples", "model-store")))
SECONDS = float(os.environ.get("SECONDS", "60"))
OUT = os.path.abspath(os.environ.get("OUT", os.path.join(ROOT, "docs", "dashboard.png")))

# One image per model, posted raw (the models' configs have `preprocess:`).
IMAGES = {"digits_cnn": os.path.join(STORE, "digits_cnn", "samples", "0000_4.png"),
          "mobilenet_v3_small": os.path.join(ROOT, "examples", "images", "cat.jpg"),
          "resnet18": os.path.join(ROOT, "examples", "images", "cat.jpg")}


def traffic(port, model, path, stop, pause):
    body = open(path, "rb").read()
    while not stop.is_set():
        call(port, "POST", f"/predictions/{model}", body=body)
        time.sleep(pause)


def main():
    tmp = tempfile.mkdtemp(prefix="dashboard-shot-")
    server = InferdServer(STORE, args=["--memory-budget", "1G"], binary=INFERD, name="screenshot",
                          out_dir=os.path.join(tmp, "server"), ready_timeout=300).start()
    stop = threading.Event()
    pauses = {"digits_cnn": 0.01, "mobilenet_v3_small": 0.05, "resnet18": 0.3}
    threads = [threading.Thread(target=traffic, args=(server.http, m, p, stop, pauses[m]))
               for m, p in IMAGES.items()]
    for t in threads:
        t.start()
    driver = start_chromium(os.path.join(tmp, "profile"))
    try:
        driver.get(f"http://127.0.0.1:{server.management}/")
        wait_ready(driver, wait_until)
        time.sleep(SECONDS)
        driver.set_window_size(1500, 980)
        driver.save_screenshot(OUT)
        print(f"wrote {OUT}")
    finally:
        stop.set()
        for t in threads:
            t.join()
        driver.quit()
        server.stop()


if __name__ == "__main__":
    main()

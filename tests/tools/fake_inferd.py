#!/usr/bin/env python3
"""A stand-in for `inferd serve` and for the peer's run.sh in the harness's tests: the same
start-up line, health paths and SIGTERM behaviour, no model.

  fake_inferd.py serve [--ready-after S] [--exit-code N] [--die] [--never-ready] ...
  fake_inferd.py peer MODEL_DIR PORT MODE                               (what run.sh takes)

serve binds four free ports, prints `inferd: listening http=.. management=.. metrics=..
grpc=..`, answers GET /v2/health/ready 503 until --ready-after seconds have passed, then
200 (--never-ready: never, and logs `inferd: ready=false` as serve does when a model failed
to load); /metrics holds fake_requests_total{model="m"} = the number of GETs so far. --die: exit 3
before printing the line. peer answers GET /ping on PORT and starts one child process
(a gunicorn worker's stand-in) that lives until the group is stopped.
"""
import http.server
import signal
import socket
import subprocess
import sys
import threading
import time

start = time.monotonic()
hits = 0


class Handler(http.server.BaseHTTPRequestHandler):
    ready_after = 0.0

    def do_GET(self):
        global hits
        hits += 1
        if self.path in ("/v2/health/ready", "/ping"):
            ok = time.monotonic() - start >= self.ready_after
            self._answer(200 if ok else 503, b"{}")
        elif self.path == "/v2/health/live":
            self._answer(200, b"{}")
        elif self.path == "/metrics":
            self._answer(200, f'# TYPE fake_requests_total counter\nfake_requests_total{{model="m"}} {hits}\n'
                              f'fake_requests_total{{model="n"}} 100\n'.encode())
        else:
            self._answer(404, b"{}")

    def _answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def serve_on(port):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def flag(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    if sys.argv[1] == "serve":
        if "--die" in sys.argv:
            print("fake: refusing to start", file=sys.stderr)
            sys.exit(3)
        Handler.ready_after = flag("--ready-after", 0.0)
        ports = [serve_on(0) for _ in range(3)]
        grpc = socket.socket()
        grpc.bind(("127.0.0.1", 0))
        print(f"inferd: listening http={ports[0]} management={ports[1]} metrics={ports[2]} "
              f"grpc={grpc.getsockname()[1]}", flush=True)
        print("fake: serving", file=sys.stderr, flush=True)
        if "--never-ready" in sys.argv:
            Handler.ready_after = 1e9
            print("inferd: ready=false", file=sys.stderr, flush=True)
        stop.wait()
        sys.exit(flag("--exit-code", 0))
    else:  # peer MODEL_DIR PORT MODE
        serve_on(int(sys.argv[3]))
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        stop.wait()


if __name__ == "__main__":
    main()

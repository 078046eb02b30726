-- wrk script: POST one file as the raw body of every request, and print a
-- one-line JSON summary at the end (for tools/bench_vs_python.sh).
--   WRK_BODY_FILE=cat.jpg WRK_CONTENT_TYPE=image/jpeg \
--     wrk -t1 -c4 -d15s --latency -s tools/wrk_post_file.lua http://127.0.0.1:8080/predictions/m
-- Non-2xx/3xx answers are counted by wrk as errors.status; the summary's
-- "ok_requests" leaves them (and socket errors) out.
local path = os.getenv("WRK_BODY_FILE")
if path == nil then
  error("set WRK_BODY_FILE to the file to POST")
end
local f = assert(io.open(path, "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = os.getenv("WRK_CONTENT_TYPE") or "application/octet-stream"

function done(summary, latency, requests)
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.timeout + e.status
  local seconds = summary.duration / 1e6
  io.write(string.format(
    'WRK_JSON {"requests": %d, "errors": %d, "status_errors": %d, "duration_s": %.3f, ' ..
    '"ok_requests_per_s": %.3f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, ' ..
    '"mean_ms": %.3f, "max_ms": %.3f}\n',
    summary.requests, errors, e.status, seconds, (summary.requests - errors) / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.mean / 1000, latency.max / 1000))
end

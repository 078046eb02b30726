-- wrk script: POST the files of a directory in turn (a rotating mix of texts),
-- as text/plain, and print the same one-line JSON summary as wrk_post_file.lua.
--   WRK_TEXT_DIR=bench/texts wrk -t1 -c8 -d15s --latency -s tools/wrk_post_texts.lua \
--     http://127.0.0.1:8080/predictions/m
-- Each connection starts at a different file (wrk's `init` runs per thread;
-- `request` per request), so that concurrent requests carry different lengths.
local dir = os.getenv("WRK_TEXT_DIR")
if dir == nil then
  error("set WRK_TEXT_DIR to a directory of text files")
end
local bodies = {}
local names = io.popen('ls "' .. dir .. '"')
for name in names:lines() do
  local f = assert(io.open(dir .. "/" .. name, "rb"))
  bodies[#bodies + 1] = f:read("*a")
  f:close()
end
names:close()
if #bodies == 0 then
  error("no files in " .. dir)
end
local next_body = 0
local content_type = os.getenv("WRK_CONTENT_TYPE") or "text/plain; charset=utf-8"

function request()
  next_body = next_body % #bodies + 1
  return wrk.format("POST", nil, {["Content-Type"] = content_type}, bodies[next_body])
end

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

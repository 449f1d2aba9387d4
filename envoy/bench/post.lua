-- wrk script: POSTs a JSON body read from a file. Usage:
--   wrk ... -s post.lua URL -- BODY_FILE PATH MODE SALT
-- MODE `unique` (default): every `@@U@@` in the body becomes a token unique
-- to this request (salt, thread, counter; letters only, so no detector takes
-- it for a value), so no message is ever seen twice and the filter's memo of
-- masked texts cannot help: the worst case, every string masked afresh.
-- MODE `history`: only the last `@@U@@` (the newest message) is unique; the
-- earlier messages repeat from request to request, as when an agent resends
-- its conversation with one new turn: the memo serves the history.
-- MODE `repeat`: the same body every time.
-- At the end prints one line `BENCHJSON {...}` with the figures (latency in µs).

local thread_no = 0

function setup(thread)
  thread_no = thread_no + 1
  thread:set("tid", thread_no)
end

local letters = "abcdefghijklmnopqrstuvwxyz"
local function word(n)
  local t = {}
  repeat
    local d = n % 26
    t[#t + 1] = letters:sub(d + 1, d + 1)
    n = math.floor(n / 26)
  until n == 0
  return table.concat(t)
end

local pieces, fixed, path, salt, history
local counter = 0
local headers = { ["Content-Type"] = "application/json" }

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local body = f:read("*a")
  f:close()
  path = args[2] or "/v1/chat/completions"
  local mode = args[3] or "unique"
  salt = word(tonumber(args[4] or "0"))
  pieces = {}
  local start = 1
  while true do
    local s, e = body:find("@@U@@", start, true)
    if not s then
      pieces[#pieces + 1] = body:sub(start)
      break
    end
    pieces[#pieces + 1] = body:sub(start, s - 1)
    start = e + 1
  end
  if mode == "repeat" then
    fixed = wrk.format("POST", path, headers, table.concat(pieces, "ref"))
  elseif mode == "history" and #pieces > 1 then
    -- Everything up to the last marker, with the earlier markers fixed.
    history = table.concat(pieces, "ref", 1, #pieces - 1)
  end
end

function request()
  if fixed then
    return fixed
  end
  counter = counter + 1
  local token = "ref" .. salt .. "x" .. word(tid) .. "x" .. word(counter)
  if history then
    return wrk.format("POST", path, headers, history .. token .. pieces[#pieces])
  end
  return wrk.format("POST", path, headers, table.concat(pieces, token))
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"bytes":%d,"non2xx":%d,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end

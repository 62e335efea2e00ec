-- wrk script: every request is one stateless 2026-07-28 `tools/call` of
-- get_weather_data {"location":"Paris"} with the request-metadata headers
-- the revision requires. Responses other than 200 with a `result` count as
-- errors (printed at the end, and they fail scripts/bench-http.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_weather_data"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather_data",' ..
  '"arguments":{"location":"Paris"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}}}'

local bad = 0
local checked = 0

response = function(status, headers, body)
  checked = checked + 1
  if status ~= 200 or not string.find(body, '"structuredContent":', 1, true)
      or not string.find(body, '"city":"Paris"', 1, true) then
    bad = bad + 1
  end
end

done = function(summary, latency, requests)
  io.write(string.format('{"requests":%d,"seconds":%.3f,"p50_ms":%.3f,"p99_ms":%.3f,"bad":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    bad + summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end

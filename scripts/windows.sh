#!/usr/bin/env bash
# Windows: the workspace's libraries, binaries, examples and benches compile
# for x86_64-pc-windows-gnu with no lint (clippy -D warnings: the code behind
# `cfg(not(unix))` is checked too), and the `toolshape.exe` built from them
# serves, calls, proxies and answers HTTP under Wine, each answer checked.
#
# Installs what it needs: the target's standard library (rustup), MinGW-w64
# and Wine (Debian's packages, with apt-get as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
rustup target list --installed | grep -qx "$target" || rustup target add "$target"

wine=/usr/lib/wine/wine64
if ! command -v x86_64-w64-mingw32-gcc >/dev/null || [ ! -x "$wine" ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get install -y -qq --no-install-recommends gcc-mingw-w64-x86-64 wine64 >/dev/null 2>&1 \
    || { $sudo_cmd apt-get update -qq >/dev/null && $sudo_cmd apt-get install -y -qq --no-install-recommends gcc-mingw-w64-x86-64 wine64 >/dev/null; }
fi

cargo clippy --locked -q --workspace --lib --bins --examples --benches --target "$target" -- -D warnings
cargo build --locked -q -p toolshape-cli --bin toolshape --target "$target"
target_dir=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
exe_dir="$target_dir/$target/debug"
linux_toolshape="$target_dir/debug/toolshape"

work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  WINEPREFIX="$work/prefix" timeout 10 /usr/lib/wine/wineserver -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Wine 8 (Debian 12) has no bcryptprimitives.dll, whose ProcessPrng Rust's
# standard library calls for random bytes (Windows 10 and later have it):
# a DLL of ours, built here, gives it from RtlGenRandom. Beside the .exe,
# where Windows looks for a DLL first.
cat >"$work/prng.c" <<'EOF'
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len) {
    ULONG chunk = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}
EOF
x86_64-w64-mingw32-gcc -O2 -shared -o "$exe_dir/bcryptprimitives.dll" "$work/prng.c" -ladvapi32

export WINEPREFIX="$work/prefix" WINEDEBUG=-all
win_path() { printf 'Z:%s' "${1//\//\\}"; }
exe="$exe_dir/toolshape.exe"
exe_win=$(win_path "$exe")
mkdir -p "$work/root/docs"
printf 'hello from Windows\n' >"$work/root/docs/a.txt"
root_win=$(win_path "$work/root")
fail() { echo "windows: $*" >&2; exit 1; }

# The first start makes Wine's prefix (a few seconds).
version=$(timeout -k 5 120 "$wine" "$exe" --version 2>/dev/null) || fail "toolshape.exe --version failed"
echo "$version under $("$wine" --version 2>/dev/null || echo Wine)"

# A client (toolshape.exe call) starting the server (toolshape.exe serve) as
# its child over pipes; the file read through the root's handle.
out=$(timeout -k 5 60 "$wine" "$exe" call read_text --args '{"path":"docs\\a.txt"}' -- "$exe_win" serve --root "$root_win" 2>"$work/err") \
  || { cat "$work/err" >&2; fail "call over stdio failed"; }
[ "$out" = "hello from Windows" ] || fail "call over stdio printed: $out"
echo "stdio: toolshape.exe call -- toolshape.exe serve read a file under the root"

# A path out of the root is the tool's error (exit 1), and the server goes on.
if out=$(timeout -k 5 60 "$wine" "$exe" call read_text --json --args '{"path":"..\\outside.txt"}' -- "$exe_win" serve --root "$root_win" 2>/dev/null); then
  fail "a path outside the root was read: $out"
fi
grep -q '"isError": true' <<<"$out" || fail "a path outside the root: $out"
grep -q 'outside the workspace root' <<<"$out" || fail "a path outside the root: $out"
echo "stdio: a path outside the root refused"

# The file's resource as Windows clients read a file URI (file:///Z:/...),
# read back by it; the instructions name the folder as users write it
# (Z:\..., not \\?\Z:\...).
python3 - "$wine" "$exe" "$root_win" "$work/root" <<'PY' || fail "resources over stdio"
import json, subprocess, sys

wine, exe, root_win, root = sys.argv[1:5]
server = subprocess.Popen([wine, exe, "serve", "--no-watch", "--root", root_win], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

def send(message):
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()

def ask(id, method, params):
    send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    while True:
        line = server.stdout.readline()
        if not line:
            sys.exit(f"the server ended before answering {method}")
        message = json.loads(line)
        if message.get("id") == id:
            if "result" not in message:
                sys.exit(f"{method}: {message}")
            return message["result"]

hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "windows.sh", "version": "1"}}
instructions = ask(1, "initialize", hello)["instructions"]
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
if "\\\\?\\" in instructions or root_win not in instructions:
    sys.exit(f"the instructions name the folder so: {instructions}")
uri = "file:///Z:" + root + "/docs/a.txt"
listed = [resource["uri"] for resource in ask(2, "resources/list", {})["resources"]]
if uri not in listed:
    sys.exit(f"{uri} is not among the resources listed: {listed}")
contents = ask(3, "resources/read", {"uri": uri})["contents"]
if contents[0].get("text") != "hello from Windows\n":
    sys.exit(f"{uri} read as {contents}")
server.stdin.close()
server.wait(timeout=30)
PY
echo "stdio: the file's resource file:///Z:/.../docs/a.txt listed and read"

# The proxy between them: toolshape.exe proxy -- toolshape.exe serve.
out=$(timeout -k 5 60 "$wine" "$exe" call read_text --args '{"path":"docs/a.txt"}' -- "$exe_win" proxy -- "$exe_win" serve --root "$root_win" 2>"$work/err") \
  || { cat "$work/err" >&2; fail "call through the proxy failed"; }
[ "$out" = "hello from Windows" ] || fail "call through the proxy printed: $out"
echo "proxy: toolshape.exe proxy -- toolshape.exe serve relayed the call"

# A server behind a wrapper (`cmd /c` running a batch file, as `npx.cmd` is
# run) that starts a process of its own, which outlives the wrapper's end of
# its input (an HTTP server): when the proxy in front of them stops, its job
# object takes that grandchild too (without it, still serving).
grandchild_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '@echo off\r\nstart "" /b %s serve --root %s --http 127.0.0.1:%s\r\n%s serve --root %s\r\n' \
  "$exe_win" "$root_win" "$grandchild_port" "$exe_win" "$root_win" >"$work/wrapper.cmd"
python3 - "$wine" "$exe" "$(win_path "$work/wrapper.cmd")" "$grandchild_port" <<'PY' || fail "a wrapper's child outlived the proxy"
import json, subprocess, sys, time, urllib.request

wine, exe, wrapper, port = sys.argv[1:5]
health = f"http://127.0.0.1:{port}/health"

def serving():
    try:
        with urllib.request.urlopen(health, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False

proxy = subprocess.Popen([wine, exe, "proxy", "--", "cmd", "/c", wrapper], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "windows.sh", "version": "1"}}
proxy.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}) + "\n")
proxy.stdin.flush()
if "result" not in json.loads(proxy.stdout.readline()):
    sys.exit("the proxy did not answer initialize")
deadline = time.monotonic() + 60
while not serving():
    if time.monotonic() > deadline:
        sys.exit("the wrapper's own child never served")
    time.sleep(0.2)
proxy.stdin.close()
proxy.wait(timeout=30)
deadline = time.monotonic() + 10
while serving():
    if time.monotonic() > deadline:
        sys.exit(f"the wrapper's own child still serves on port {port} after the proxy ended")
    time.sleep(0.2)
PY
echo "proxy: a wrapper's own child (cmd /c, start /b) stopped with the proxy, by its job object"

# Streamable HTTP served by toolshape.exe, called from this machine's toolshape.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$wine" "$exe" serve --root "$root_win" --http "127.0.0.1:$port" 2>"$work/http.err" &
server_pid=$!
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/mcp" 2>/dev/null || true)
  [ "$code" != 000 ] && [ -n "$code" ] && break
  sleep 0.2
done
[ -x "$linux_toolshape" ] || cargo build --locked -q -p toolshape-cli --bin toolshape
out=$(timeout -k 5 60 "$linux_toolshape" call read_text --url "http://127.0.0.1:$port/mcp" --args '{"path":"docs/a.txt"}' 2>"$work/err") \
  || { cat "$work/err" "$work/http.err" >&2; fail "call over HTTP failed"; }
[ "$out" = "hello from Windows" ] || fail "call over HTTP printed: $out"
echo "http: toolshape.exe serve --http answered a client on this machine"

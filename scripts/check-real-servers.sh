#!/usr/bin/env bash
# Runs `toolshape check --protocol all` (calls: read-only tools) on four MCP servers
# from the package registries, installed at exact versions:
#   @modelcontextprotocol/server-everything, @modelcontextprotocol/server-filesystem (npm ci,
#   check/real-servers/package-lock.json), mcp-server-time, mcp-server-git (pip venvs,
#   check/real-servers/*-requirements.txt pin every package).
# The filesystem and git servers get a scratch folder and repository; each tool that needs a
# real path or timezone gets it with --args (the rest of the arguments are generated).
# TOOLSHAPE_BIN=path uses that binary instead of building a release one.
# Reports go to $REAL_SERVERS_HOME/reports (default target/real-servers/reports): NAME.txt
# and NAME.json. docs/check-real-servers.md records and judges the findings.
# Exits non-zero when a server cannot be installed or started (exit 4) or the check itself
# fails; a server with findings (exit 3) is reported, not a failure of this script. With
# --verify, it also fails when the error and warning findings differ from
# check/real-servers/expected-findings.json (what the test command runs).
# Then the proxy's --root in front of the filesystem server started without folders.
# Takes about 1.5 minutes (server-everything's long-running tool runs 10 s per call).
set -euo pipefail
cd "$(dirname "$0")/.."
verify=false
[[ ${1:-} == --verify ]] && verify=true
root=$PWD
home=${REAL_SERVERS_HOME:-$root/target/real-servers}
src=$root/check/real-servers
reports=$home/reports
log() { printf 'check-real-servers: %s\n' "$*" >&2; }
stamp() { cat "$@" | sha256sum | cut -d' ' -f1; }
mkdir -p "$home" "$reports"

if [[ -n ${TOOLSHAPE_BIN:-} ]]; then
  toolshape=$TOOLSHAPE_BIN
else
  log "building toolshape (release)"
  cargo build --release --locked -q -p toolshape-cli
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  toolshape=$target_dir/release/toolshape
fi

# --- npm servers -----------------------------------------------------------------------------
npm_dir=$home/npm
want=$(stamp "$src/package.json" "$src/package-lock.json")
if [[ -f $npm_dir/.stamp && $(<"$npm_dir/.stamp") == "$want" && -d $npm_dir/node_modules ]]; then
  log "npm servers up to date"
else
  log "installing the npm servers (npm ci)"
  rm -rf "$npm_dir" && mkdir -p "$npm_dir"
  cp "$src/package.json" "$src/package-lock.json" "$npm_dir/"
  (cd "$npm_dir" && npm ci --no-audit --no-fund --silent)
  printf '%s' "$want" >"$npm_dir/.stamp"
fi
everything=$npm_dir/node_modules/.bin/mcp-server-everything
filesystem=$npm_dir/node_modules/.bin/mcp-server-filesystem
[[ -x $everything && -x $filesystem ]] || { log "npm ci did not install the servers"; exit 1; }

# --- PyPI servers ----------------------------------------------------------------------------
venv() { # name requirements
  local dir=$home/$1-venv
  local want
  want=$(stamp "$2")
  if [[ -f $dir/.stamp && $(<"$dir/.stamp") == "$want" ]]; then
    log "$1 venv up to date"
  else
    log "installing $1 (pip, every package pinned)"
    rm -rf "$dir"
    "${PYTHON:-python3}" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$2"
    "$dir/bin/python" -m pip check --disable-pip-version-check >/dev/null
    printf '%s' "$want" >"$dir/.stamp"
  fi
}
venv time "$src/time-requirements.txt"
venv git "$src/git-requirements.txt"

# --- Scratch data --------------------------------------------------------------------------
scratch=$home/scratch
rm -rf "$scratch" && mkdir -p "$scratch/files/sub" "$scratch/repo"
printf 'hello\nworld\n' >"$scratch/files/a.txt"
printf 'x\n' >"$scratch/files/sub/b.txt"
git -C "$scratch/repo" init -q
printf 'one\n' >"$scratch/repo/file.txt"
git -C "$scratch/repo" add file.txt
git -C "$scratch/repo" -c user.email=check@example.invalid -c user.name=check commit -qm "first commit"
printf 'two\n' >>"$scratch/repo/file.txt"
files=$scratch/files
repo=$scratch/repo

# --- Checks --------------------------------------------------------------------------------
status=0
summary() { # report.json -> "E errors, W warnings, N notes"
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("%d errors, %d warnings, %d notes" % (s["errors"], s["warnings"], s["infos"]))' "$1"
}
check() { # name, then toolshape check arguments
  local name=$1
  shift
  log "checking $name"
  local code=0
  "$toolshape" check --protocol all --json-file "$reports/$name.json" "$@" >"$reports/$name.txt" || code=$?
  case $code in
    0 | 3) log "$name: exit $code ($(summary "$reports/$name.json"))" ;;
    *) log "$name: exit $code (not reached, or the check failed)"; status=1 ;;
  esac
}

check everything -- "$everything"
check filesystem \
  --args "read_file={\"path\":\"$files/a.txt\"}" \
  --args "read_text_file={\"path\":\"$files/a.txt\"}" \
  --args "read_media_file={\"path\":\"$files/a.txt\"}" \
  --args "read_multiple_files={\"paths\":[\"$files/a.txt\",\"$files/sub/b.txt\"]}" \
  --args "list_directory={\"path\":\"$files\"}" \
  --args "list_directory_with_sizes={\"path\":\"$files\"}" \
  --args "directory_tree={\"path\":\"$files\"}" \
  --args "search_files={\"path\":\"$files\",\"pattern\":\"*.txt\"}" \
  --args "get_file_info={\"path\":\"$files/a.txt\"}" \
  -- "$filesystem" "$files"
check time \
  --args 'get_current_time={"timezone":"Europe/Paris"}' \
  --args 'convert_time={"source_timezone":"Europe/Paris","time":"12:30","target_timezone":"Asia/Tokyo"}' \
  -- "$home/time-venv/bin/mcp-server-time"
check git \
  --args "git_status={\"repo_path\":\"$repo\"}" \
  --args "git_diff_unstaged={\"repo_path\":\"$repo\"}" \
  --args "git_diff_staged={\"repo_path\":\"$repo\"}" \
  --args "git_diff={\"repo_path\":\"$repo\",\"target\":\"HEAD\"}" \
  --args "git_log={\"repo_path\":\"$repo\"}" \
  --args "git_show={\"repo_path\":\"$repo\",\"revision\":\"HEAD\"}" \
  --args "git_branch={\"repo_path\":\"$repo\",\"branch_type\":\"local\"}" \
  -- "$home/git-venv/bin/mcp-server-git" --repository "$repo"

# --- The proxy's own roots -------------------------------------------------------------------
# The filesystem server started without folders works in the roots its client offers, asked
# right after the handshake, outside any call. Behind `toolshape proxy --root`, it gets the
# proxy's roots (the caller offers another folder, which the server must not get); behind a
# proxy without --root it gets the caller's (as the proxy's only client, asked once it has
# connected; the server may still be reading them when the call comes, so that run checks only
# that the proxy's folder is not there).
allowed() { # proxy arguments... -> the filesystem server's allowed directories, through the proxy
  "$toolshape" call list_allowed_directories --root "$repo" --quiet-server -- \
    "$toolshape" proxy "$@" -- "$filesystem" 2>/dev/null || true
}
files_real=$(realpath "$files")
# The server reads its roots' folders while it already serves: a call that comes first
# (a slow machine) sees none yet, so the positive case gets three tries.
for _ in 1 2 3; do
  with_root=$(allowed --root "$files")
  [[ $with_root == *"$files_real"* ]] && break
done
without_root=$(allowed)
if [[ $with_root == *"$files_real"* && $with_root != *"$repo"* && $without_root != *"$files_real"* ]]; then
  log "proxy --root: the filesystem server got the proxy's roots, not the caller's"
else
  log "proxy --root: unexpected allowed directories: with --root [$with_root], without [$without_root]"
  status=1
fi

log "reports in $reports"
if $verify && [[ $status == 0 ]]; then
  python3 - "$src/expected-findings.json" "$reports" <<'PY' || status=1
import json, sys
expected = json.load(open(sys.argv[1]))
failed = False
for name in ["everything", "filesystem", "time", "git"]:
    report = json.load(open(f"{sys.argv[2]}/{name}.json"))
    found = sorted({(f["tool"] or "(server)", f["rule"]) for f in report["findings"] if f["severity"] != "info"})
    want = sorted(tuple(pair) for pair in expected[name])
    if found != want:
        failed = True
        print(f"check-real-servers: {name}: expected {want}, found {found}", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
  [[ $status == 0 ]] && log "findings as expected (check/real-servers/expected-findings.json)"
fi
exit $status

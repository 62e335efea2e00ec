# Makes sure nginx is installed (from Debian: nginx-light, else nginx) and
# sets nginx_bin to it. Source it from a benchmark script.
# shellcheck shell=bash

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "installing nginx from Debian..." >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q nginx-light >/dev/null 2>&1 || {
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q nginx-light >/dev/null || $sudo apt-get install -y -q nginx >/dev/null
  }
fi
# shellcheck disable=SC2034 # used by the script that sources this
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

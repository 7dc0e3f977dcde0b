#!/usr/bin/env bash
# Installs the headless browser the web UI's end-to-end tests drive
# (tests/web_ui, over the Chrome DevTools Protocol): Debian's `chromium`,
# and `fonts-dejavu-core` so its screenshots have glyphs. Prints the
# browser's path.
#
# Idempotent and quiet when both are present. The downloaded .debs stay in
# ${EGIRL_CACHE:-$HOME/.cache/egirl}/apt, so a CI cache of that directory
# makes the next install offline; the package lists are refreshed
# (`apt-get update`) only when the install fails without them. Uses sudo
# unless root.
#
# EGIRL_CHROMIUM names another browser binary: then nothing is installed.
# For checking this script: EGIRL_APT_DRY_RUN=1 prints the apt-get commands
# instead of running them; EGIRL_CHROMIUM_PATH and EGIRL_FONT_PATH move the
# files looked for.
set -euo pipefail

if [[ -n "${EGIRL_CHROMIUM:-}" ]]; then
  [[ -x "$EGIRL_CHROMIUM" ]] || { echo "install-chromium: EGIRL_CHROMIUM=$EGIRL_CHROMIUM is not an executable" >&2; exit 1; }
  echo "$EGIRL_CHROMIUM"
  exit 0
fi

BROWSER="${EGIRL_CHROMIUM_PATH:-/usr/bin/chromium}"
FONT="${EGIRL_FONT_PATH:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}"
ARCHIVES="${EGIRL_CACHE:-$HOME/.cache/egirl}/apt"

missing=()
[[ -x "$BROWSER" ]] || missing+=(chromium)
[[ -e "$FONT" ]] || missing+=(fonts-dejavu-core)
if ((${#missing[@]} == 0)); then
  echo "$BROWSER"
  exit 0
fi

command -v apt-get >/dev/null || {
  echo "install-chromium: no apt-get here; install Chromium and set EGIRL_CHROMIUM to its binary" >&2
  exit 1
}
sudo=()
[[ "$(id -u)" -eq 0 ]] || sudo=(sudo)
run() {
  if [[ -n "${EGIRL_APT_DRY_RUN:-}" ]]; then
    echo "would run: $*" >&2
  else
    "$@"
  fi
}

# apt wants the archive dir and its partial/ to exist (and writable by
# its download user, hence owned like the rest of the cache).
mkdir -p "$ARCHIVES/partial"
install=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y
  -o "Dir::Cache::archives=$ARCHIVES" install --no-install-recommends "${missing[@]}")
echo "install-chromium: installing ${missing[*]} (debs kept in $ARCHIVES)" >&2
if ! run "${install[@]}" >&2; then
  echo "install-chromium: refreshing the package lists and trying again" >&2
  run "${sudo[@]}" apt-get update -q >&2
  run "${install[@]}" >&2
fi
if [[ -z "${EGIRL_APT_DRY_RUN:-}" && ! -x "$BROWSER" ]]; then
  echo "install-chromium: $BROWSER is still missing after the install" >&2
  exit 1
fi
echo "$BROWSER"

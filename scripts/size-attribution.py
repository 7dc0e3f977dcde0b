#!/usr/bin/env python3
"""Where the release binary's bytes go, by crate (as `cargo bloat --crates`
counts them: a function belongs to the crate its path starts with, so a
generic instantiated for egirl's types counts for the crate that wrote it).

    CARGO_PROFILE_RELEASE_STRIP=false cargo build --release --bin egirl
    scripts/size-attribution.py target/release/egirl [TOP]

Reads the symbol table (`nm`; a stripped binary has none) and the section
headers (`readelf`); prints the sections and the TOP crates (default 25)
by bytes of `.text`.
"""
import collections
import re
import subprocess
import sys


def sections(binary):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            sizes[m.group(1)] = int(m.group(2), 16)
    return sizes


def crate_of(name):
    # `<T as core::fmt::Debug>::fmt` belongs to T's crate; `_ZN...` already
    # demangled by nm -C; C symbols (sqlite3*, ...) are their own group.
    # `core::ptr::drop_in_place<serenity::...>` is serenity's weight.
    m = re.match(r"core::ptr::drop_in_place<(.*)>$", name)
    if m:
        name = m.group(1)
    name = re.sub(r"^(?:[<&*(\[]|mut |const |dyn |impl )+", "", name)
    if name.startswith("sqlite3") or name.startswith("fts5") or name.startswith("yy"):
        return "sqlite (C)"
    head = re.split(r"::|<| |\(|\[", name, maxsplit=1)[0]
    if not head or "::" not in name:
        return "(other, C and unnamed)"
    return head


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/size-attribution.py BINARY [TOP]")
    binary = sys.argv[1]
    if subprocess.run(["readelf", "-h", binary], capture_output=True).returncode != 0:
        sys.exit(f"size-attribution: {binary} is not an ELF file readelf can read")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    secs = sections(binary)
    text = secs.get(".text", 0)
    nm = subprocess.run(["nm", "-S", "--size-sort", "-C", binary], capture_output=True, text=True).stdout
    by_crate = collections.Counter()
    counted = 0
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[2] not in "tTwW":
            continue
        size = int(parts[1], 16)
        by_crate[crate_of(parts[3])] += size
        counted += size
    mb = lambda n: f"{n / 1e6:8.2f} MB"
    print(f"{binary}: {mb(sum(v for k, v in secs.items() if k not in ('.symtab', '.strtab')))} in loaded and other sections")
    for name in (".text", ".rodata", ".data.rel.ro", ".eh_frame", ".gcc_except_table", ".rela.dyn", ".relr.dyn", ".symtab", ".strtab"):
        if name in secs:
            print(f"  {name:<18} {mb(secs[name])}")
    if not counted:
        print("no symbols: build with CARGO_PROFILE_RELEASE_STRIP=false")
        return
    print(f".text by crate ({mb(counted)} in named functions of {mb(text)}):")
    for crate, size in by_crate.most_common(top):
        print(f"  {crate:<28} {mb(size)}  {100 * size / text:5.1f}%")


if __name__ == "__main__":
    main()

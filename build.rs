//! Link-time settings for the `egirl` binary only (tests and benches are
//! linked as cargo does by default).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        // Relative relocations packed as bitmaps (DT_RELR): the position-
        // independent binary's ~110,000 of them shrink from 2.5 MB of
        // `.rela.dyn`, read at every start, to a few KB. GNU ld 2.38+ and lld
        // emit it only against a glibc that reads it (2.36+); an older linker
        // warns and ignores the flag.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

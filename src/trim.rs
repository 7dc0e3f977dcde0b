//! Memory handed back to the system once a burst of work is over: the
//! heap's free pages (`malloc_trim`) and the pages of the binary's
//! read-only segments that start-up or a turn touched (`MADV_DONTNEED`).
//!
//! Start-up runs code that an idle daemon never runs again (parsing the
//! config, opening the index, starting every service): the kernel keeps
//! those pages mapped, and counted in the process's resident memory, until
//! something else needs the memory. Only the read-only segments (code and
//! constants, never written) are advised: the kernel unmaps their pages,
//! which stay in the page cache, and maps each again from the file on its
//! next use (a minor fault); the writable segments (relocated data,
//! statics) are never touched. (A debugger's breakpoint written into the
//! code would be dropped with its page.)
/// Hands back what the last burst of work left: free heap pages, and the
/// binary's read-only pages. Returns the bytes of the read-only segments
/// advised (0 where the kernel or libc cannot).
pub fn after_burst() -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only returns free memory; 0 keeps no pad.
        unsafe { libc::malloc_trim(0) };
        drop_read_only_segments()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    0
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn drop_read_only_segments() -> usize {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback only reads the headers the loader passes it and
    // pushes into the Vec behind `data`, which outlives the call.
    unsafe {
        libc::dl_iterate_phdr(
            Some(collect_main_program),
            (&mut ranges as *mut Vec<(usize, usize)>).cast(),
        );
    }
    let mut advised = 0;
    for (start, len) in ranges {
        let at = start as *mut libc::c_void;
        // SAFETY: whole pages inside a read-only PT_LOAD segment of the
        // running binary, never written: dropping their mappings changes
        // nothing they read as (the file holds the same bytes).
        unsafe {
            // A page used again is mapped alone: without this, each fault
            // maps its neighbours too (64 KiB and more a fault), and a few
            // faults bring most of it back.
            libc::madvise(at, len, libc::MADV_RANDOM);
            if libc::madvise(at, len, libc::MADV_DONTNEED) == 0 {
                advised += len;
            }
        }
    }
    advised
}

/// `dl_iterate_phdr`'s callback: the main program comes first; its
/// read-only loadable segments, shrunk to the whole pages they cover.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe extern "C" fn collect_main_program(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: the loader passes a valid info for the call's duration, and
    // `data` is the Vec `drop_read_only_segments` passed.
    let (info, ranges) = unsafe { (&*info, &mut *data.cast::<Vec<(usize, usize)>>()) };
    // SAFETY: a plain getter.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let headers = if info.dlpi_phdr.is_null() {
        &[][..]
    } else {
        // SAFETY: dlpi_phnum headers at dlpi_phdr, valid during the call.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    for header in headers {
        if header.p_type != libc::PT_LOAD || header.p_flags & libc::PF_W != 0 {
            continue;
        }
        let start = info.dlpi_addr as usize + header.p_vaddr as usize;
        let end = start + header.p_memsz as usize;
        let (first, last) = (start.div_ceil(page) * page, end / page * page);
        if last > first {
            ranges.push((first, last - first));
        }
    }
    // Non-zero: stop after the main program.
    1
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn drops_the_read_only_segments_and_the_code_still_runs() {
        let advised = super::after_burst();
        // The test binary's text alone is megabytes.
        assert!(advised > 1 << 20, "advised {advised} bytes");
        // Code and constants dropped come back on use.
        let words: Vec<String> = (0..1000).map(|i| format!("word {i}")).collect();
        assert_eq!(words[999], "word 999");
        super::after_burst();
        assert_eq!(words.iter().map(String::len).sum::<usize>(), 7890);
    }
}

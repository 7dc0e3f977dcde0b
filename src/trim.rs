//! Memory handed back to the system once a burst of work is over: the
//! heap's free pages (`malloc_trim`) and the pages of the binary's
//! read-only segments that start-up or a turn touched (`MADV_PAGEOUT`).
//!
//! Start-up runs code that an idle daemon never runs again (parsing the
//! config, opening the index, starting every service): the kernel keeps
//! those pages mapped, and counted in the process's resident memory, until
//! something else needs the memory. Paging them out is safe whatever they
//! hold: read-only pages of the binary are dropped and read again from
//! the file on their next use; the writable segments (relocated data,
//! statics) are never touched. What the process uses again comes back on
//! its own; a page another process maps (a TUI of the same binary) stays.

/// Hands back what the last burst of work left: free heap pages, and the
/// binary's read-only pages this process alone maps. Returns the bytes of
/// the read-only segments advised (0 where the kernel or libc cannot).
pub fn after_burst() -> usize {
    free_heap_pages();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        page_out_read_only_segments()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    0
}

/// Hands the heap's free pages back to the system (after a large free).
pub fn free_heap_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory; 0 keeps no pad.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn page_out_read_only_segments() -> usize {
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
        // running binary; neither advice changes what they read as.
        unsafe {
            // A page used again is read alone: without this, each fault
            // reads ahead and maps its neighbours too (64 KiB and more a
            // fault), and a few faults bring most of it back.
            libc::madvise(at, len, libc::MADV_RANDOM);
            if libc::madvise(at, len, libc::MADV_PAGEOUT) == 0 {
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
    // `data` is the Vec `page_out_read_only_segments` passed.
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
    fn pages_out_the_read_only_segments_and_the_code_still_runs() {
        let advised = super::after_burst();
        // The test binary's text alone is megabytes; kernels before 5.4
        // have no MADV_PAGEOUT and refuse the advice.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut version = release
            .split(['.', '-'])
            .map(|n| n.parse::<u32>().unwrap_or(0));
        let (major, minor) = (version.next().unwrap_or(0), version.next().unwrap_or(0));
        if (major, minor) >= (5, 4) {
            assert!(advised > 1 << 20, "advised {advised} bytes");
        }
        // Code and constants paged out come back on use.
        let words: Vec<String> = (0..1000).map(|i| format!("word {i}")).collect();
        assert_eq!(words[999], "word 999");
        super::after_burst();
        assert_eq!(words.iter().map(String::len).sum::<usize>(), 7890);
    }
}

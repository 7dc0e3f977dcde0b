#!/usr/bin/env python3
# A resumed long session through the real binary (figures in
# docs/benchmarks.md): starts the release `egirl --session ID` in a 120x36
# pseudo-terminal RUNS times and prints, per run, the CPU time the process
# had used and the wall time when "? help" (the status line's right end,
# the last row of a frame) first appeared, VmRSS after 1 s of quiet, and,
# with KEYS=N, the time from writing each of N typed keys (60 ms apart, a
# fast typist) to the first output byte that answers it: key-to-draw plus
# the PTY, per key.
#
# The session file: `EGIRL_LONG_SESSION_FILE=DIR/ws/sessions/ID.jsonl cargo
# bench --bench tui_long_session` writes the bench's 10,000-message one.
# The config needs no server: `[workspace] path = "ws"`, `[local] endpoint`
# may point nowhere (the TUI starts without it).
#
#   KEYS=300 scripts/bench-long-session.py target/release/egirl DIR/egirl.toml ID RUNS
import os, pty, sys, time, select, fcntl, termios, struct, signal, statistics
binary, config, session, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
home = os.path.dirname(config)
firsts, rsss = [], []
for _ in range(runs):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["HOME"] = home
        os.environ["TERM"] = "xterm-256color"
        os.execv(binary, [binary, "--config", config, "--session", session])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    t0 = time.monotonic(); buf = b""; first = None; last = t0
    while True:
        r, _, _ = select.select([fd], [], [], 0.05)
        now = time.monotonic()
        if r:
            try: data = os.read(fd, 65536)
            except OSError: break
            buf += data; last = now
            if first is None and b"? help" in buf:
                first = now - t0
                f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                cpu_first = (int(f[11]) + int(f[12])) * 1000 / os.sysconf("SC_CLK_TCK")
        if first is not None and now - last > 1.0: break
        if now - t0 > 60: break
    lat = []
    if os.environ.get("KEYS") and first is not None:
        for i in range(int(os.environ["KEYS"])):
            c = b"abcdefghij klmnopqrst"[i % 21:i % 21 + 1]
            t = time.monotonic(); os.write(fd, c)
            r, _, _ = select.select([fd], [], [], 2.0)
            if r:
                lat.append((time.monotonic() - t) * 1e3)
                time.sleep(0.003)
                while select.select([fd], [], [], 0)[0]:
                    os.read(fd, 65536)
            time.sleep(0.06)
        lat.sort()
        pc = lambda p: lat[min(len(lat)-1, max(0, int(len(lat)*p + 0.999) - 1))]
        print(f"key-to-output n={len(lat)} p50 {pc(0.5):.2f} p90 {pc(0.9):.2f} p99 {pc(0.99):.2f} max {lat[-1]:.2f} ms", flush=True)
    rss = 0
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): rss = int(line.split()[1]) / 1024
    shown = b"Type a message" not in buf
    os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); os.close(fd)
    firsts.append(first * 1e3 if first else float("nan")); rsss.append(rss)
    print(f"cpu at first frame {cpu_first:.0f} ms, first frame {firsts[-1]:.1f} ms, settled {(last - t0)*1e3:.1f} ms, RSS {rss:.1f} MiB, transcript shown {shown}", flush=True)
print(f"p50 first frame {statistics.median(firsts):.1f} ms, max {max(firsts):.1f}; p50 RSS {statistics.median(rsss):.1f} MiB, max {max(rsss):.1f}")

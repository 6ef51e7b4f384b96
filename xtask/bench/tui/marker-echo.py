# marker-echo.py — the "marker latency" workload of `cargo xtask bench tui`.
#
# Usage: python3 marker-echo.py ROUNDS OUT_FILE
#
# ROUNDS times: writes the line MARK-NN, notes the monotonic clock, and
# blocks until a line arrives on stdin (the watcher pressing Enter once it
# has seen the marker). The time from the marker's write returning to the
# line arriving is one sample: it holds the watcher noticing the marker and
# sending a key, plus the kernel's PTY path both ways. After the last round
# the samples (microseconds, one per line) go to OUT_FILE and the program
# writes LAT-DONE and sleeps, so the watcher, not the program, ends the run.
import os
import sys
import time


def main() -> None:
    rounds = int(sys.argv[1])
    out = sys.argv[2]
    fd = sys.stdout.fileno()
    samples = []
    for i in range(rounds):
        os.write(fd, b"MARK-%02d\n" % i)
        t0 = time.monotonic_ns()
        sys.stdin.readline()
        samples.append((time.monotonic_ns() - t0) // 1000)
    with open(out, "w") as f:
        f.write("".join("%d\n" % s for s in samples))
    os.write(fd, b"LAT-DONE\n")
    time.sleep(30)


if __name__ == "__main__":
    main()

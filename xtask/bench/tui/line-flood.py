# line-flood.py — the "line flood" workload of `cargo xtask bench tui`.
#
# Usage: python3 line-flood.py [SLEEP_SECONDS]
#
# Writes 400,000 lines of 55 bytes each (54 characters and a newline) to
# stdout with one os.write per line, then the line MARKER-DONE, then sleeps
# SLEEP_SECONDS (default 30) so that a terminal watcher, not the program's
# exit, ends the run. The references (no terminal, bare PTY) pass 0.
import os
import sys
import time

LINES = 400_000


def main() -> None:
    pause = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    fd = sys.stdout.fileno()
    for i in range(LINES):
        # 8-digit counter, ": ", a 43-character pangram and "." = 54 characters, then "\n".
        os.write(fd, b"%08d: the quick brown fox jumps over the lazy dog.\n" % i)
    os.write(fd, b"MARKER-DONE\n")
    time.sleep(pause)


if __name__ == "__main__":
    main()

// xterm-wait.mjs — the node-pty + @xterm/headless peer of `cargo xtask bench tui`.
//
// Usage: node xterm-wait.mjs <marker> <program> [args...]
//
// Spawns the program in a PTY of 80x24 (node-pty), feeds everything it
// prints into a headless xterm.js Terminal of the same size, and after each
// write has been parsed (the write callback) looks for the marker in the
// active buffer's visible lines. When it appears, the program is killed and
// this script exits 0; exit 1 if the program ends or 120 s pass first. The
// bench copies this file next to its node_modules (the peer cache) so that
// `node-pty` and `@xterm/headless` resolve.
import pty from "node-pty";
import headless from "@xterm/headless";

const { Terminal } = headless;
const [marker, program, ...args] = process.argv.slice(2);
if (!marker || !program) {
  console.error("usage: node xterm-wait.mjs <marker> <program> [args...]");
  process.exit(2);
}

const cols = 80;
const rows = 24;
const term = new Terminal({ cols, rows, allowProposedApi: true });
const child = pty.spawn(program, args, {
  name: "xterm-256color",
  cols,
  rows,
  cwd: process.cwd(),
  env: process.env,
});

let done = false;
function finish(code, message) {
  if (done) return;
  done = true;
  clearTimeout(timer);
  if (message) console.error(message);
  // node-pty makes the child a session (and process group) leader: end the
  // whole group, so that a `sleep` after the marker does not outlive us.
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }
  process.exit(code);
}

/** Whether the marker is on one of the visible lines of the active buffer. */
function markerVisible() {
  const buf = term.buffer.active;
  for (let y = buf.viewportY; y < buf.viewportY + rows; y++) {
    const line = buf.getLine(y);
    if (line && line.translateToString(true).includes(marker)) return true;
  }
  return false;
}

child.onData((data) => {
  term.write(data, () => {
    if (!done && markerVisible()) finish(0);
  });
});
child.onExit(({ exitCode }) => {
  // Let the last writes be parsed before judging.
  term.write("", () => {
    if (markerVisible()) finish(0);
    else finish(1, `program exited (${exitCode}) before ${marker} appeared`);
  });
});
const timer = setTimeout(() => finish(1, `no ${marker} within 120 s`), 120_000);

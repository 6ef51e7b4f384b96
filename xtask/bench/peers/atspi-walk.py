# atspi-walk.py — the pyatspi peer of `cargo xtask bench desktop`.
#
# Usage: /usr/bin/python3 atspi-walk.py walk -- PROGRAM [ARGS...]
#        /usr/bin/python3 atspi-walk.py find ROLE NAME -- PROGRAM [ARGS...]
#
# Runs on the display and session bus of its environment (DISPLAY,
# DBUS_SESSION_BUS_ADDRESS), like the ui-qa run it is compared with:
# launches PROGRAM, waits until an application whose process is PROGRAM
# (or one of its children) is on the accessibility bus with a frame, then
# times one operation and prints one JSON line {"ms": ..., "nodes": ...}:
#
# - walk: the whole tree under the application, reading for every node the
#   role, name, state set and screen extents, plus what ui-qa's
#   snapshotAccessibility also reads (accessible id, interfaces, text
#   content, value); at most 2000 nodes, ui-qa's snapshot cap.
# - find: pyatspi.findDescendant from the application for the first node
#   with that role name (e.g. "push button") and accessible name, then its
#   name is read back (what ui-qa's assertText on a role+name locator does).
#
# Only the operation is timed, not the launch or the wait. The program is
# terminated before exit. Exit 0 on success, 1 otherwise.
import json
import os
import signal
import subprocess
import sys
import time

import pyatspi

NODE_CAP = 2000
TEXT_CAP = 2000


def descendants_of(pid):
    """The pid and every descendant pid of it (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = {pid}, [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in found:
                found.add(c)
                todo.append(c)
    return found


def wait_for_app(pid, timeout=30.0):
    """The application of the process tree under pid once it shows a frame."""
    deadline = time.monotonic() + timeout
    desktop = pyatspi.Registry.getDesktop(0)
    while time.monotonic() < deadline:
        pids = descendants_of(pid)
        for app in desktop:
            try:
                if app is None or app.get_process_id() not in pids:
                    continue
                if any(c is not None and c.getRole() == pyatspi.ROLE_FRAME for c in app):
                    return app
            except Exception:  # an application going away while we look
                continue
        time.sleep(0.05)
    return None


def read_node(o):
    """Everything a snapshot records for one node; returns its children."""
    node = {"role": o.getRoleName(), "name": o.name}
    node["states"] = [pyatspi.stateToString(s) for s in o.getState().getStates()]
    try:
        node["id"] = o.accessibleId
    except Exception:
        pass
    ifaces = o.get_interfaces()
    node["interfaces"] = ifaces
    if "Component" in ifaces:
        e = o.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        node["extents"] = (e.x, e.y, e.width, e.height)
    if "Text" in ifaces:
        t = o.queryText()
        node["text"] = t.getText(0, min(t.characterCount, TEXT_CAP))
    if "Value" in ifaces:
        node["value"] = o.queryValue().currentValue
    return node, [o.getChildAtIndex(i) for i in range(o.childCount)]


def walk(app):
    """Depth-first walk of the whole tree; returns the node count."""
    count, stack = 0, [app]
    while stack and count < NODE_CAP:
        o = stack.pop()
        if o is None:
            continue
        try:
            _, kids = read_node(o)
        except Exception:  # a node that went away mid-walk
            continue
        count += 1
        stack.extend(reversed(kids))
    return count


def main():
    args = sys.argv[1:]
    if "--" not in args or not args:
        print(__doc__ or "usage: atspi-walk.py walk|find ROLE NAME -- PROGRAM", file=sys.stderr)
        return 2
    split = args.index("--")
    mode, program = args[:split], args[split + 1 :]
    if not program or mode[:1] not in (["walk"], ["find"]) or (mode[0] == "find" and len(mode) != 3):
        print("usage: atspi-walk.py walk|find ROLE NAME -- PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    child = subprocess.Popen(program, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        app = wait_for_app(child.pid)
        if app is None:
            print(f"{program[0]} did not appear on the accessibility bus", file=sys.stderr)
            return 1
        if mode[0] == "walk":
            t = time.perf_counter()
            nodes = walk(app)
            ms = (time.perf_counter() - t) * 1000
            print(json.dumps({"ms": round(ms, 1), "nodes": nodes}))
            return 0
        role, name = mode[1], mode[2]
        t = time.perf_counter()
        hit = pyatspi.findDescendant(app, lambda o: o.getRoleName() == role and o.name == name)
        got = hit.name if hit is not None else None
        ms = (time.perf_counter() - t) * 1000
        if got != name:
            print(f"no {role} named {name!r}", file=sys.stderr)
            return 1
        print(json.dumps({"ms": round(ms, 1), "nodes": 1}))
        return 0
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


if __name__ == "__main__":
    sys.exit(main())

//! `zbus-walk`: the floor of `cargo xtask bench desktop` — the smallest
//! pipelined AT-SPI walk that reads the fields ui-qa's accessibility
//! snapshot holds, written directly against zbus.
//!
//! Usage: `zbus-walk -- PROGRAM [ARGS...]`
//!
//! Like `xtask/bench/peers/atspi-walk.py`, it runs on the display and
//! session bus of its environment, launches PROGRAM, waits until an
//! application whose process is PROGRAM (or a descendant) is on the
//! accessibility bus with a frame, then times one walk of the whole tree
//! under that application and prints one JSON line `{"ms": …, "nodes": …}`.
//!
//! The walk reads what ui-qa's snapshot records, with the calls ui-qa's
//! Linux driver would need at best: per node, in a first round, the role,
//! the state set, the interfaces and the Accessible properties — name,
//! accessible id and child count in one `Properties.GetAll` — (four calls
//! at once), then the children unless the child count is 0; when that
//! answers, the node's children are asked for and, in a second round as its
//! interfaces allow, the screen extents (Component), the text (Text:
//! character count, then the text) and the value (Value).
//! Every call of every node is in flight at once: no level waits for
//! another. Children of a defunct node and a child naming its parent are
//! not followed; at most 2,000 nodes, ui-qa's snapshot cap. Nothing else is
//! done with the answers (no tree is built, nothing is written): it is the
//! round trips alone.

use futures_util::stream::{FuturesUnordered, StreamExt};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

/// ui-qa's snapshot cap.
const NODE_CAP: usize = 2000;
/// ui-qa asks for at most this many characters of text (4 × its cap).
const TEXT_ASK: i32 = 8000;
/// How long the application may take to show a frame.
const APPEAR: Duration = Duration::from_secs(30);

const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
/// `ROLE_FRAME` in AT-SPI's role numbering (GTK 4's role *names* differ).
const ROLE_FRAME: u32 = 23;
/// `STATE_DEFUNCT` in AT-SPI's state bit set.
const DEFUNCT: u32 = 1 << 6;

/// One accessible object: bus name and object path.
#[derive(Clone)]
struct Obj {
    bus: String,
    path: OwnedObjectPath,
}

type R<T> = Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let program = match args.iter().position(|a| a == "--") {
        Some(i) if i + 1 < args.len() => &args[i + 1..],
        _ => {
            eprintln!("usage: zbus-walk -- PROGRAM [ARGS...]");
            return ExitCode::from(2);
        }
    };
    let mut child = match Command::new(&program[0])
        .args(&program[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zbus-walk: {}: {e}", program[0]);
            return ExitCode::FAILURE;
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = rt.block_on(measure(child.id()));
    // SIGTERM, as the Python peer does; then reap it.
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    match result {
        Ok((ms, nodes)) => {
            println!("{{\"ms\": {ms:.1}, \"nodes\": {nodes}}}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zbus-walk: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Connects, waits for the application, and times one walk.
async fn measure(pid: u32) -> R<(f64, usize)> {
    let conn = a11y_bus().await?;
    let app = wait_for_app(&conn, pid).await?;
    let started = Instant::now();
    let nodes = walk(&conn, app).await;
    Ok((started.elapsed().as_secs_f64() * 1000.0, nodes))
}

/// The accessibility bus, found through `org.a11y.Bus.GetAddress` on the
/// session bus.
async fn a11y_bus() -> R<zbus::Connection> {
    let session = zbus::Connection::session()
        .await
        .map_err(|e| format!("session bus: {e}"))?;
    let reply = session
        .call_method(
            Some("org.a11y.Bus"),
            "/org/a11y/bus",
            Some("org.a11y.Bus"),
            "GetAddress",
            &(),
        )
        .await
        .map_err(|e| format!("org.a11y.Bus.GetAddress: {e}"))?;
    let addr: String = reply.body().deserialize().map_err(|e| e.to_string())?;
    zbus::connection::Builder::address(addr.as_str())
        .map_err(|e| e.to_string())?
        .build()
        .await
        .map_err(|e| format!("a11y bus {addr}: {e}"))
}

/// The pid and every descendant of it (from `/proc`).
fn descendants_of(pid: u32) -> HashSet<u32> {
    let mut children: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if let Some(pp) = ppid {
            children.push((pp, p));
        }
    }
    let mut found = HashSet::from([pid]);
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for &(pp, c) in &children {
            if pp == p && found.insert(c) {
                todo.push(c);
            }
        }
    }
    found
}

/// The application of the process tree under `pid`, once it has a frame.
async fn wait_for_app(conn: &zbus::Connection, pid: u32) -> R<Obj> {
    let deadline = Instant::now() + APPEAR;
    let registry = Obj {
        bus: "org.a11y.atspi.Registry".into(),
        path: OwnedObjectPath::try_from(ROOT_PATH).expect("valid path"),
    };
    while Instant::now() < deadline {
        let pids = descendants_of(pid);
        for app in children(conn, &registry).await.unwrap_or_default() {
            let owner = conn
                .call_method(
                    Some("org.freedesktop.DBus"),
                    "/org/freedesktop/DBus",
                    Some("org.freedesktop.DBus"),
                    "GetConnectionUnixProcessID",
                    &(app.bus.as_str(),),
                )
                .await
                .ok()
                .and_then(|m| m.body().deserialize::<u32>().ok());
            if !owner.is_some_and(|p| pids.contains(&p)) {
                continue;
            }
            for w in children(conn, &app).await.unwrap_or_default() {
                if call::<u32>(conn, &w, ACCESSIBLE, "GetRole", &())
                    .await
                    .is_ok_and(|r| r == ROLE_FRAME)
                {
                    return Ok(app);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("the program did not appear on the accessibility bus".into())
}

/// One method call on an object, its reply deserialized.
async fn call<T>(
    conn: &zbus::Connection,
    o: &Obj,
    iface: &str,
    method: &str,
    body: &(impl serde::Serialize + zbus::zvariant::DynamicType),
) -> R<T>
where
    T: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
{
    let reply = conn
        .call_method(Some(o.bus.as_str()), &o.path, Some(iface), method, body)
        .await
        .map_err(|e| e.to_string())?;
    reply.body().deserialize::<T>().map_err(|e| e.to_string())
}

/// One property of an object (`Properties.Get`).
async fn property(conn: &zbus::Connection, o: &Obj, iface: &str, name: &str) -> R<OwnedValue> {
    call::<OwnedValue>(conn, o, PROPERTIES, "Get", &(iface, name)).await
}

/// An object's children (null references left out).
async fn children(conn: &zbus::Connection, o: &Obj) -> R<Vec<Obj>> {
    let kids: Vec<(String, OwnedObjectPath)> =
        call(conn, o, ACCESSIBLE, "GetChildren", &()).await?;
    Ok(kids
        .into_iter()
        .filter(|(bus, path)| !bus.is_empty() && path.as_str() != "/org/a11y/atspi/null")
        .map(|(bus, path)| Obj { bus, path })
        .collect())
}

/// What a node's first round answers; the values themselves are dropped.
struct Base {
    children: Vec<Obj>,
    defunct: bool,
    /// Whether it has Component, Text, Value.
    detail: [bool; 3],
}

/// A node's first round: role, state set, interfaces and the Accessible
/// properties (name, accessible id, child count: one `GetAll`) at once;
/// then its children, unless the child count says it has none. `None` if
/// the object is gone.
async fn base(conn: &zbus::Connection, o: &Obj) -> Option<Base> {
    let (role, props, states, ifaces) = futures_util::join!(
        call::<u32>(conn, o, ACCESSIBLE, "GetRole", &()),
        call::<HashMap<String, OwnedValue>>(conn, o, PROPERTIES, "GetAll", &(ACCESSIBLE,)),
        call::<Vec<u32>>(conn, o, ACCESSIBLE, "GetState", &()),
        call::<Vec<String>>(conn, o, ACCESSIBLE, "GetInterfaces", &()),
    );
    role.ok()?;
    let count = props
        .as_ref()
        .ok()
        .and_then(|p| p.get("ChildCount"))
        .and_then(|v| i32::try_from(v).ok());
    let _ = props
        .ok()
        .map(|p| (p.get("Name").cloned(), p.get("AccessibleId").cloned()));
    let kids = if count == Some(0) {
        Vec::new()
    } else {
        children(conn, o).await.unwrap_or_default()
    };
    let ifaces = ifaces.unwrap_or_default();
    let has = |i: &str| ifaces.iter().any(|x| x == i);
    Some(Base {
        children: kids,
        defunct: states.is_ok_and(|s| s.first().is_some_and(|w| w & DEFUNCT != 0)),
        detail: [
            has("org.a11y.atspi.Component"),
            has("org.a11y.atspi.Text"),
            has("org.a11y.atspi.Value"),
        ],
    })
}

/// A node's second round, as its interfaces allow: screen extents, text
/// (character count, then the text), value, all at once.
async fn detail(conn: &zbus::Connection, o: &Obj, [c, t, v]: [bool; 3]) {
    futures_util::join!(
        async {
            if c {
                let _ = call::<(i32, i32, i32, i32)>(
                    conn,
                    o,
                    "org.a11y.atspi.Component",
                    "GetExtents",
                    &(0u32,),
                )
                .await;
            }
        },
        async {
            if t {
                let count = property(conn, o, "org.a11y.atspi.Text", "CharacterCount")
                    .await
                    .ok()
                    .and_then(|v| i32::try_from(v).ok())
                    .unwrap_or(0);
                let _ = call::<String>(
                    conn,
                    o,
                    "org.a11y.atspi.Text",
                    "GetText",
                    &(0i32, count.clamp(0, TEXT_ASK)),
                )
                .await;
            }
        },
        async {
            if v {
                let _ = property(conn, o, "org.a11y.atspi.Value", "CurrentValue").await;
            }
        },
    );
}

/// What one task of the walk answers.
enum Done {
    /// A node's first round (`None`: it vanished).
    Base(Obj, Option<Base>),
    /// A node's second round.
    Detail,
}

/// Walks the whole tree under `root` and returns how many nodes answered.
/// A node's children are asked for as soon as its first round answers; its
/// second round overlaps with everything else.
async fn walk(conn: &zbus::Connection, root: Obj) -> usize {
    type Task<'a> = Pin<Box<dyn Future<Output = Done> + Send + 'a>>;
    let first = |o: Obj| -> Task<'_> {
        Box::pin(async move {
            let b = base(conn, &o).await;
            Done::Base(o, b)
        })
    };
    let mut tasks: FuturesUnordered<Task<'_>> = FuturesUnordered::new();
    tasks.push(first(root));
    let (mut asked, mut nodes) = (1usize, 0usize);
    while let Some(done) = tasks.next().await {
        let Done::Base(o, Some(b)) = done else {
            continue;
        };
        nodes += 1;
        if !b.defunct {
            for c in b.children {
                if c.bus == o.bus && c.path == o.path || asked >= NODE_CAP {
                    continue;
                }
                asked += 1;
                tasks.push(first(c));
            }
        }
        if b.detail.iter().any(|d| *d) {
            tasks.push(Box::pin(async move {
                detail(conn, &o, b.detail).await;
                Done::Detail
            }));
        }
    }
    nodes
}

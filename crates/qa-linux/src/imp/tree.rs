//! Fetching the accessible tree: one level at a time, every call of a level
//! issued concurrently, and only the fields a step needs.

use super::bus::{accessible, proxy};
use super::objref::ObjRef;
use crate::locate::{truncate, NodeView};
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{CoordType, Interface, InterfaceSet, State, StateSet};
use futures_util::future::join_all;
use serde_json::{json, Map, Value};

/// Which optional fields to fetch (role, name and children always are).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Fields {
    /// Accessible id.
    pub id: bool,
    /// State set.
    pub states: bool,
    /// Interfaces, screen extents, text content and value.
    pub detail: bool,
    /// Text content / value even without `detail` (text searches).
    pub content: bool,
}

impl Fields {
    /// Everything (snapshots).
    pub(crate) const ALL: Fields = Fields {
        id: true,
        states: true,
        detail: true,
        content: true,
    };
}

/// Maximum characters of text content kept per node.
pub(crate) const TEXT_CAP: usize = 2000;

/// One fetched node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The object.
    pub obj: ObjRef,
    /// What matching needs.
    pub view: NodeView,
    /// States, when fetched.
    pub states: Option<StateSet>,
    /// Interfaces, when fetched.
    pub interfaces: Option<InterfaceSet>,
    /// Screen extents `(x, y, width, height)`, when fetched and available.
    pub bounds: Option<(i32, i32, i32, i32)>,
    /// Text content (Text interface), when fetched.
    pub text: Option<String>,
    /// Current value (Value interface), when fetched.
    pub value: Option<f64>,
    /// Child objects.
    pub children: Vec<ObjRef>,
    /// Indices of fetched children in the flat list.
    pub child_idx: Vec<usize>,
}

/// Reads the text content of an object with the Text interface.
pub(crate) async fn read_text(conn: &zbus::Connection, o: &ObjRef) -> Option<String> {
    let t: TextProxy = proxy(conn, o).await.ok()?;
    // GTK 4 answers GetText(0, -1) with "": ask for the character count first.
    let count = t.character_count().await.ok()?;
    let s = t
        .get_text(0, count.clamp(0, TEXT_CAP as i32 * 4))
        .await
        .ok()?;
    Some(truncate(&s, TEXT_CAP))
}

/// Reads the current value of an object with the Value interface.
pub(crate) async fn read_value(conn: &zbus::Connection, o: &ObjRef) -> Option<f64> {
    let v: ValueProxy = proxy(conn, o).await.ok()?;
    v.current_value().await.ok()
}

/// Fetches one node's fields concurrently. `None` if the object is gone.
pub(crate) async fn fetch(conn: &zbus::Connection, obj: ObjRef, f: Fields) -> Option<Node> {
    let p = accessible(conn, &obj).await.ok()?;
    let want_ifaces = f.detail || f.content;
    let (role, name, children, id, states, ifaces) = futures_util::join!(
        p.get_role_name(),
        p.name(),
        p.get_children(),
        async {
            if f.id {
                p.accessible_id().await.ok()
            } else {
                None
            }
        },
        async {
            if f.states {
                p.get_state().await.ok()
            } else {
                None
            }
        },
        async {
            if want_ifaces {
                p.get_interfaces().await.ok()
            } else {
                None
            }
        },
    );
    let role = role.ok()?;
    let mut node = Node {
        view: NodeView {
            role,
            name: name.unwrap_or_default(),
            id,
            parent: None,
            order: Vec::new(),
        },
        states,
        interfaces: ifaces,
        bounds: None,
        text: None,
        value: None,
        children: children
            .map(|c| c.iter().filter_map(ObjRef::from_owned).collect())
            .unwrap_or_default(),
        child_idx: Vec::new(),
        obj,
    };
    if let Some(ifs) = ifaces {
        let (bounds, text, value) = futures_util::join!(
            async {
                if f.detail && ifs.contains(Interface::Component) {
                    let c: ComponentProxy = proxy(conn, &node.obj).await.ok()?;
                    c.get_extents(CoordType::Screen).await.ok()
                } else {
                    None
                }
            },
            async {
                if ifs.contains(Interface::Text) {
                    read_text(conn, &node.obj).await
                } else {
                    None
                }
            },
            async {
                if ifs.contains(Interface::Value) {
                    read_value(conn, &node.obj).await
                } else {
                    None
                }
            },
        );
        node.bounds = bounds;
        node.text = text;
        node.value = value;
    }
    Some(node)
}

/// Walks the tree under `root` breadth-first, each level's calls
/// concurrently, up to `cap` nodes. Returns the flat list (root first,
/// parents before children) and whether the cap cut it short.
pub(crate) async fn walk(
    conn: &zbus::Connection,
    root: &ObjRef,
    f: Fields,
    cap: usize,
) -> (Vec<Node>, bool) {
    let mut nodes: Vec<Node> = Vec::new();
    let mut truncated = false;
    // (object, parent index, order)
    let mut level: Vec<(ObjRef, Option<usize>, Vec<u32>)> = vec![(root.clone(), None, Vec::new())];
    while !level.is_empty() {
        let room = cap.saturating_sub(nodes.len());
        if level.len() > room {
            level.truncate(room);
            truncated = true;
        }
        if level.is_empty() {
            break;
        }
        let fetched = join_all(level.iter().map(|(o, _, _)| fetch(conn, o.clone(), f))).await;
        let mut next = Vec::new();
        for ((_, parent, order), node) in level.into_iter().zip(fetched) {
            let Some(mut node) = node else { continue };
            let idx = nodes.len();
            node.view.parent = parent;
            node.view.order = order.clone();
            if let Some(p) = parent {
                nodes[p].child_idx.push(idx);
            }
            // Defunct subtrees and cycles (a child pointing back up) are not followed.
            let defunct = node.states.is_some_and(|s| s.contains(State::Defunct));
            if !defunct {
                for (i, c) in node.children.iter().enumerate() {
                    if *c != node.obj {
                        let mut o = order.clone();
                        o.push(i as u32);
                        next.push((c.clone(), Some(idx), o));
                    }
                }
            }
            nodes.push(node);
        }
        level = next;
    }
    (nodes, truncated)
}

/// The direct children of `root` (an application's top-level windows), at
/// most `cap`, fetched concurrently; children that vanished are skipped.
/// Empty when `root` does not answer.
pub(crate) async fn children(
    conn: &zbus::Connection,
    root: &ObjRef,
    f: Fields,
    cap: usize,
) -> Vec<Node> {
    let Ok(p) = accessible(conn, root).await else {
        return Vec::new();
    };
    let Ok(kids) = p.get_children().await else {
        return Vec::new();
    };
    let refs: Vec<ObjRef> = kids
        .iter()
        .filter_map(ObjRef::from_owned)
        .filter(|c| c != root)
        .take(cap)
        .collect();
    join_all(refs.into_iter().map(|o| fetch(conn, o, f)))
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The flat views for locator matching.
pub(crate) fn views(nodes: &[Node]) -> Vec<NodeView> {
    nodes.iter().map(|n| n.view.clone()).collect()
}

/// State names of a set, AT-SPI spelling.
pub(crate) fn state_names(s: StateSet) -> Vec<&'static str> {
    s.iter().map(|st| st.to_static_str()).collect()
}

/// A value formatted for people (`5`, not `5.0`).
pub(crate) fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The bounded snapshot JSON of a fetched subtree rooted at index `i`.
pub(crate) fn snapshot_json(nodes: &[Node], i: usize) -> Value {
    let n = &nodes[i];
    let mut m = Map::new();
    m.insert("role".into(), json!(n.view.role));
    m.insert("name".into(), json!(n.view.name));
    if let Some(id) = n.view.id.as_deref().filter(|s| !s.is_empty()) {
        m.insert("id".into(), json!(id));
    }
    if let Some(v) = n.value {
        m.insert("value".into(), json!(format_value(v)));
    }
    if let Some(t) = &n.text {
        m.insert("text".into(), json!(t));
    }
    if let Some(s) = n.states {
        m.insert("states".into(), json!(state_names(s)));
    }
    if let Some((x, y, w, h)) = n.bounds {
        m.insert(
            "bounds".into(),
            json!({"x": x, "y": y, "width": w, "height": h}),
        );
    }
    if !n.child_idx.is_empty() {
        let kids: Vec<Value> = n
            .child_idx
            .iter()
            .map(|&c| snapshot_json(nodes, c))
            .collect();
        m.insert("children".into(), Value::Array(kids));
    }
    Value::Object(m)
}

/// Every readable string of a node: text content, value, name.
pub(crate) fn node_texts(n: &Node) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(t) = &n.text {
        v.push(t.clone());
    }
    if let Some(x) = n.value {
        v.push(format_value(x));
    }
    if !n.view.name.is_empty() {
        v.push(n.view.name.clone());
    }
    v
}

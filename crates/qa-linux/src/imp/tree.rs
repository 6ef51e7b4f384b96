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
    let mut node = fetch_base(conn, obj, f).await?;
    fetch_detail(conn, &mut node, f).await;
    Some(node)
}

/// The first round of a node: role, name, children and, as `f` asks, id,
/// states and interfaces, concurrently. `None` if the object is gone.
async fn fetch_base(conn: &zbus::Connection, obj: ObjRef, f: Fields) -> Option<Node> {
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
    let node = Node {
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
    Some(node)
}

/// The second round, which needs the interfaces: extents, text content and
/// value, concurrently.
async fn fetch_detail(conn: &zbus::Connection, node: &mut Node, f: Fields) {
    if let Some(ifs) = node.interfaces {
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
}

/// Walks the tree under `root`, up to `cap` nodes. Returns the flat list in
/// breadth-first order (root first, parents before children, siblings in
/// their order) and whether the cap cut it short.
///
/// Pipelined: a node's children are asked for as soon as its own first
/// round answers, so the walk's critical path is one round trip per level
/// rather than a whole level's slowest node; its second round (extents,
/// text, value) overlaps with the rest. A tree larger than `cap` is walked
/// again level by level, so which nodes a capped walk keeps stays the
/// breadth-first prefix.
pub(crate) async fn walk(
    conn: &zbus::Connection,
    root: &ObjRef,
    f: Fields,
    cap: usize,
) -> (Vec<Node>, bool) {
    match walk_pipelined(conn, root, f, cap).await {
        Some(nodes) => (nodes, false),
        None => walk_levels(conn, root, f, cap).await,
    }
}

/// What one pipelined fetch answers.
enum Fetched {
    /// A node's first round (`None`: it vanished), with its place.
    Base(Option<Node>, Option<usize>, Vec<u32>),
    /// A node's second round, for the node at this index.
    Detail(usize, Node),
}

/// The pipelined walk; `None` when the tree has more than `cap` nodes.
async fn walk_pipelined(
    conn: &zbus::Connection,
    root: &ObjRef,
    f: Fields,
    cap: usize,
) -> Option<Vec<Node>> {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    use std::future::Future;
    use std::pin::Pin;
    type Task<'a> = Pin<Box<dyn Future<Output = Fetched> + Send + 'a>>;
    let base = |obj: ObjRef, parent: Option<usize>, order: Vec<u32>| -> Task<'_> {
        Box::pin(async move { Fetched::Base(fetch_base(conn, obj, f).await, parent, order) })
    };
    let mut nodes: Vec<Node> = Vec::new();
    let mut asked = 1usize;
    let mut tasks: FuturesUnordered<Task<'_>> = FuturesUnordered::new();
    tasks.push(base(root.clone(), None, Vec::new()));
    while let Some(done) = tasks.next().await {
        match done {
            Fetched::Base(None, _, _) => {}
            Fetched::Base(Some(mut node), parent, order) => {
                let idx = nodes.len();
                node.view.parent = parent;
                node.view.order = order.clone();
                let defunct = node.states.is_some_and(|s| s.contains(State::Defunct));
                if !defunct {
                    for (i, c) in node.children.iter().enumerate() {
                        if *c != node.obj {
                            asked += 1;
                            if asked > cap {
                                return None;
                            }
                            let mut o = order.clone();
                            o.push(i as u32);
                            tasks.push(base(c.clone(), Some(idx), o));
                        }
                    }
                }
                if node.interfaces.is_some() {
                    // The second round works on a copy; it is merged back below.
                    let mut copy = node.clone();
                    tasks.push(Box::pin(async move {
                        fetch_detail(conn, &mut copy, f).await;
                        Fetched::Detail(idx, copy)
                    }));
                }
                nodes.push(node);
            }
            Fetched::Detail(idx, d) => {
                let n = &mut nodes[idx];
                n.bounds = d.bounds;
                n.text = d.text;
                n.value = d.value;
            }
        }
    }
    Some(breadth_first(nodes))
}

/// Reorders a walk's nodes breadth-first (by depth, then by their path of
/// child positions) and rebuilds parent and child indices.
fn breadth_first(mut nodes: Vec<Node>) -> Vec<Node> {
    let old_parent: Vec<Option<usize>> = nodes.iter().map(|n| n.view.parent).collect();
    let mut perm: Vec<usize> = (0..nodes.len()).collect();
    perm.sort_by(|&a, &b| {
        let (oa, ob) = (&nodes[a].view.order, &nodes[b].view.order);
        oa.len().cmp(&ob.len()).then_with(|| oa.cmp(ob))
    });
    let mut new_of = vec![0usize; nodes.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_of[old] = new;
    }
    let mut slots: Vec<Option<Node>> = nodes.drain(..).map(Some).collect();
    let mut out: Vec<Node> = perm
        .iter()
        .map(|&old| slots[old].take().expect("each node once"))
        .collect();
    for (new, &old) in perm.iter().enumerate() {
        out[new].view.parent = old_parent[old].map(|p| new_of[p]);
        out[new].child_idx.clear();
    }
    for i in 0..out.len() {
        if let Some(p) = out[i].view.parent {
            out[p].child_idx.push(i);
        }
    }
    out
}

/// The level-by-level walk: each level's calls concurrently.
async fn walk_levels(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, parent: Option<usize>, order: &[u32]) -> Node {
        Node {
            obj: ObjRef {
                bus: ":1.1".into(),
                path: format!("/o/{name}"),
            },
            view: NodeView {
                role: "panel".into(),
                name: name.into(),
                id: None,
                parent,
                order: order.to_vec(),
            },
            states: None,
            interfaces: None,
            bounds: None,
            text: None,
            value: None,
            children: Vec::new(),
            child_idx: Vec::new(),
        }
    }

    #[test]
    fn a_pipelined_walk_is_put_back_in_breadth_first_order() {
        // Arrival order of a pipelined walk: a deep branch answered before
        // its uncle. Tree: root -> [a -> [a0], b].
        let arrived = vec![
            node("root", None, &[]),
            node("a", Some(0), &[0]),
            node("a0", Some(1), &[0, 0]),
            node("b", Some(0), &[1]),
        ];
        let out = breadth_first(arrived);
        let names: Vec<&str> = out.iter().map(|n| n.view.name.as_str()).collect();
        assert_eq!(names, ["root", "a", "b", "a0"]);
        let parents: Vec<Option<usize>> = out.iter().map(|n| n.view.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(0), Some(1)]);
        assert_eq!(out[0].child_idx, [1, 2]);
        assert_eq!(out[1].child_idx, [3]);
        assert!(out[2].child_idx.is_empty() && out[3].child_idx.is_empty());
    }
}

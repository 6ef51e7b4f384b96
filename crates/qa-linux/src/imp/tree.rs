//! Fetching the accessible tree: one level at a time, every call of a level
//! issued concurrently, and only the fields a step needs.

use super::bus::{accessible, proxy};
use super::objref::ObjRef;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{CoordType, Interface, InterfaceSet, State, StateSet};
use futures_util::future::join_all;
use qa_desktop::locate::{truncate, NodeView};
use qa_desktop::node::{breadth_first, TEXT_CAP};
use qa_desktop::{Fields, NativeRole, States, ATSPI};

/// One accessible object as the walk read it: the reference, its
/// interfaces (when fetched) and its children's references. Equal when it
/// is the same object.
#[derive(Debug, Clone)]
pub(crate) struct AtElement {
    /// The object.
    pub obj: ObjRef,
    /// Interfaces, when fetched.
    pub interfaces: Option<InterfaceSet>,
    /// Child objects.
    pub children: Vec<ObjRef>,
}

impl PartialEq for AtElement {
    fn eq(&self, other: &Self) -> bool {
        self.obj == other.obj
    }
}

impl AtElement {
    /// Its interfaces (none when they were not fetched).
    pub(crate) fn interfaces(&self) -> InterfaceSet {
        self.interfaces.unwrap_or_else(InterfaceSet::empty)
    }
}

/// One fetched node.
pub(crate) type Node = qa_desktop::Node<AtElement>;

/// An AT-SPI state set as the portable states steps read, with its names.
pub(crate) fn states(s: StateSet) -> States {
    use qa_desktop::State as P;
    let has = |x: State| s.contains(x);
    let portable = [
        (P::Enabled, has(State::Enabled) || has(State::Sensitive)),
        (P::Focused, has(State::Focused)),
        (P::Checked, has(State::Checked) || has(State::Pressed)),
        (P::Selected, has(State::Selected)),
        (P::Visible, has(State::Showing) && has(State::Visible)),
        (P::Showing, has(State::Showing)),
        (P::Expanded, has(State::Expanded)),
        (
            P::Collapsed,
            has(State::Collapsed) || (has(State::Expandable) && !has(State::Expanded)),
        ),
        (P::Editable, has(State::Editable)),
        (P::Active, has(State::Active)),
        (P::Defunct, has(State::Defunct)),
    ];
    States::new(
        portable.into_iter().filter(|(_, on)| *on).map(|(p, _)| p),
        s.iter().map(|st| st.to_static_str()).collect(),
    )
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
        p.get_role(),
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
    let role = match role {
        Ok(r) => {
            NativeRole::from_id(&ATSPI, r as usize).unwrap_or_else(|| ATSPI.native_or_unknown(""))
        }
        // A role newer than the atspi crate: its name says which.
        Err(_) => ATSPI.native_or_unknown(&p.get_role_name().await.ok()?),
    };
    let node = Node {
        view: NodeView {
            role,
            name: name.unwrap_or_default(),
            id,
            parent: None,
            order: Vec::new(),
        },
        states: states.map(self::states),
        bounds: None,
        text: None,
        value: None,
        child_idx: Vec::new(),
        element: AtElement {
            obj,
            interfaces: ifaces,
            children: children
                .map(|c| c.iter().filter_map(ObjRef::from_owned).collect())
                .unwrap_or_default(),
        },
    };
    Some(node)
}

/// The second round, which needs the interfaces: extents, text content and
/// value, concurrently.
async fn fetch_detail(conn: &zbus::Connection, node: &mut Node, f: Fields) {
    if let Some(ifs) = node.element.interfaces {
        let (bounds, text, value) = futures_util::join!(
            async {
                if f.detail && ifs.contains(Interface::Component) {
                    let c: ComponentProxy = proxy(conn, &node.element.obj).await.ok()?;
                    c.get_extents(CoordType::Screen).await.ok()
                } else {
                    None
                }
            },
            async {
                if ifs.contains(Interface::Text) {
                    read_text(conn, &node.element.obj).await
                } else {
                    None
                }
            },
            async {
                if ifs.contains(Interface::Value) {
                    read_value(conn, &node.element.obj).await
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
                if !node.has(qa_desktop::State::Defunct) {
                    for (i, c) in node.element.children.iter().enumerate() {
                        if *c != node.element.obj {
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
                if node.element.interfaces.is_some() {
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
            if !node.has(qa_desktop::State::Defunct) {
                for (i, c) in node.element.children.iter().enumerate() {
                    if *c != node.element.obj {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_table_numbers_roles_as_the_atspi_crate_does() {
        let mut seen = 0;
        for n in 0..=400u32 {
            let Ok(r) = atspi::Role::try_from(n) else {
                continue;
            };
            seen += 1;
            let ours = NativeRole::from_id(&ATSPI, n as usize).expect("every role is in the table");
            // at-spi2-core's name for a push button; the crate says "button".
            let expected = if r == atspi::Role::Button {
                "push button"
            } else {
                r.name()
            };
            assert_eq!(ours.name(), expected, "role {n}");
            assert_eq!(ATSPI.native(r.name()), Some(ours), "role {n} by name");
        }
        assert!(seen > 100, "{seen}");
    }
}

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

/// How an application's Accessible properties are read: in one
/// `Properties.GetAll` (name, id and child count; a leaf's children are
/// then not asked for), or one `Properties.Get` each. GTK 3 and 4 answer
/// `GetAll`; Qt 5 never replies to it, so only the toolkits known to answer
/// are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// One `GetAll` per object.
    Batched,
    /// One `Get` per property.
    Single,
}

impl Reads {
    /// The reads for a toolkit, by its `ToolkitName` (`GTK`, `gtk`, `Qt`, …).
    pub(crate) fn for_toolkit(name: &str) -> Reads {
        if name.eq_ignore_ascii_case("gtk") {
            Reads::Batched
        } else {
            Reads::Single
        }
    }

    /// The reads for the application whose root accessible is `root`, from
    /// its `org.a11y.atspi.Application.ToolkitName` (one-by-one when it does
    /// not say).
    pub(crate) async fn of(conn: &zbus::Connection, root: &ObjRef) -> Reads {
        let name = async {
            let reply = conn
                .call_method(
                    Some(root.bus.as_str()),
                    root.path.as_str(),
                    Some("org.freedesktop.DBus.Properties"),
                    "Get",
                    &("org.a11y.atspi.Application", "ToolkitName"),
                )
                .await
                .ok()?;
            let v: zbus::zvariant::OwnedValue = reply.body().deserialize().ok()?;
            String::try_from(v).ok()
        };
        name.await.map_or(Reads::Single, |n| Reads::for_toolkit(&n))
    }
}

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
pub(crate) async fn fetch(
    conn: &zbus::Connection,
    reads: Reads,
    obj: ObjRef,
    f: Fields,
) -> Option<Node> {
    let mut node = fetch_base(conn, reads, obj, f).await?;
    fetch_detail(conn, &mut node, f).await;
    Some(node)
}

/// What `Properties.GetAll` on the Accessible interface answers that a
/// walk reads: one call instead of one per property.
struct Props {
    name: String,
    id: Option<String>,
    /// `None`: not reported (then the children are always asked for).
    child_count: Option<i32>,
}

/// An object's Accessible properties in one `Properties.GetAll`; an error
/// when the toolkit does not answer it.
async fn accessible_props(conn: &zbus::Connection, o: &ObjRef) -> zbus::Result<Props> {
    use std::collections::HashMap;
    use zbus::zvariant::OwnedValue;
    let reply = conn
        .call_method(
            Some(o.bus.as_str()),
            o.path.as_str(),
            Some("org.freedesktop.DBus.Properties"),
            "GetAll",
            &("org.a11y.atspi.Accessible",),
        )
        .await?;
    let mut all: HashMap<String, OwnedValue> = reply.body().deserialize()?;
    let text = |v: OwnedValue| String::try_from(v).ok();
    Ok(Props {
        name: all.remove("Name").and_then(text).unwrap_or_default(),
        id: all.remove("AccessibleId").and_then(text),
        child_count: all.remove("ChildCount").and_then(|v| i32::try_from(v).ok()),
    })
}

/// The first round of a node: role, the Accessible properties (name, id,
/// child count) and, as `f` asks, states and interfaces, concurrently; then
/// its children unless the child count says there are none (what pyatspi
/// and libatspi trust too: most nodes are leaves). With [`Reads::Single`],
/// or when `GetAll` fails, each property is asked for and the children
/// always are. `None` if the object is gone.
async fn fetch_base(conn: &zbus::Connection, reads: Reads, obj: ObjRef, f: Fields) -> Option<Node> {
    let p = accessible(conn, &obj).await.ok()?;
    let want_ifaces = f.detail || f.content;
    let (role, props, states, ifaces) = futures_util::join!(
        p.get_role(),
        async {
            match reads {
                Reads::Batched => accessible_props(conn, &obj).await.ok(),
                Reads::Single => None,
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
    let props = match props {
        Some(props) => props,
        None => {
            let (name, id) = futures_util::join!(p.name(), async {
                if f.id {
                    p.accessible_id().await.ok()
                } else {
                    None
                }
            });
            Props {
                name: name.unwrap_or_default(),
                id,
                child_count: None,
            }
        }
    };
    let children = if props.child_count == Some(0) {
        Vec::new()
    } else {
        p.get_children()
            .await
            .map(|c| c.iter().filter_map(ObjRef::from_owned).collect())
            .unwrap_or_default()
    };
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
            name: props.name,
            id: props.id.filter(|_| f.id),
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
            children,
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
    reads: Reads,
    root: &ObjRef,
    f: Fields,
    cap: usize,
) -> (Vec<Node>, bool) {
    match walk_pipelined(conn, reads, root, f, cap).await {
        Some(nodes) => (nodes, false),
        None => walk_levels(conn, reads, root, f, cap).await,
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
    reads: Reads,
    root: &ObjRef,
    f: Fields,
    cap: usize,
) -> Option<Vec<Node>> {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    use std::future::Future;
    use std::pin::Pin;
    type Task<'a> = Pin<Box<dyn Future<Output = Fetched> + Send + 'a>>;
    let base = |obj: ObjRef, parent: Option<usize>, order: Vec<u32>| -> Task<'_> {
        Box::pin(async move { Fetched::Base(fetch_base(conn, reads, obj, f).await, parent, order) })
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
    reads: Reads,
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
        let fetched = join_all(
            level
                .iter()
                .map(|(o, _, _)| fetch(conn, reads, o.clone(), f)),
        )
        .await;
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
    reads: Reads,
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
    join_all(refs.into_iter().map(|o| fetch(conn, reads, o, f)))
        .await
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gtk_is_asked_for_all_properties_at_once() {
        assert_eq!(Reads::for_toolkit("GTK"), Reads::Batched);
        assert_eq!(Reads::for_toolkit("gtk"), Reads::Batched);
        assert_eq!(Reads::for_toolkit("Qt"), Reads::Single);
        assert_eq!(Reads::for_toolkit(""), Reads::Single);
    }

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

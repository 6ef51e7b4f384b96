//! Locator matching over a fetched tree (platform-neutral, pure).
//!
//! The driver fetches the application's tree level by level into a flat list
//! of [`NodeView`]s (parents before children, each with its parent's index)
//! and asks [`find`] which nodes a [`Locator`] names.

use crate::roles::{NativeRole, RoleQuery, RoleTable};
use qa_core::flow::Locator;

/// What locator matching needs to know about one element.
#[derive(Debug, Clone)]
pub struct NodeView {
    /// The platform's role (`push button` on AT-SPI).
    pub role: NativeRole,
    /// Accessible name.
    pub name: String,
    /// Accessible id (`automationId`), when fetched.
    pub id: Option<String>,
    /// Index of the parent in the list (`None` for the root).
    pub parent: Option<usize>,
    /// Pre-order position (child indices from the root), for stable ordering.
    pub order: Vec<u32>,
}

/// Whether a desktop locator compares names exactly (the default) or by substring.
pub fn exact(loc: &Locator) -> bool {
    loc.exact.unwrap_or(true)
}

/// Names compared as accessible names are computed: leading and trailing
/// whitespace dropped, every run of whitespace one space (a menu item
/// padded to align its accelerator, `"To Uppercase      "`, is
/// `"To Uppercase"`).
fn name_ok(wanted: &str, actual: &str, exact: bool) -> bool {
    let (wanted, actual) = (collapse(wanted), collapse(actual));
    if exact {
        actual == wanted
    } else {
        actual.to_lowercase().contains(&wanted.to_lowercase())
    }
}

/// `s` trimmed, with each run of whitespace made one space.
fn collapse(s: &str) -> std::borrow::Cow<'_, str> {
    let clean = s.split_whitespace().map(str::len).sum::<usize>()
        + s.split_whitespace().count().saturating_sub(1)
        == s.len();
    if clean {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

/// A flow role parsed once for a whole tree; a role the table does not know
/// matches nothing.
#[derive(Clone, Copy)]
struct RoleFilter(Option<Result<RoleQuery, ()>>);

impl RoleFilter {
    fn new(table: &'static RoleTable, role: Option<&str>) -> Self {
        RoleFilter(role.map(|r| table.query(r).map_err(|_| ())))
    }

    fn ok(self, actual: NativeRole) -> bool {
        match self.0 {
            None => true,
            Some(Ok(q)) => q.matches(actual),
            Some(Err(())) => false,
        }
    }
}

/// One level of a locator (its own fields, or one `path` segment), ready
/// to match.
struct Level<'a> {
    role: RoleFilter,
    name: Option<&'a str>,
}

impl Level<'_> {
    fn ok(&self, n: &NodeView, exact: bool) -> bool {
        self.role.ok(n.role) && self.name.is_none_or(|w| name_ok(w, &n.name, exact))
    }
}

/// A locator compiled against one platform's role table.
struct Compiled<'a> {
    own: Level<'a>,
    id: Option<&'a str>,
    path: Option<Vec<Level<'a>>>,
    exact: bool,
}

impl<'a> Compiled<'a> {
    fn new(table: &'static RoleTable, loc: &'a Locator) -> Self {
        Compiled {
            own: Level {
                role: RoleFilter::new(table, loc.role.as_deref()),
                name: loc.name.as_deref(),
            },
            id: loc.automation_id.as_deref(),
            path: loc.path.as_ref().map(|segs| {
                segs.iter()
                    .map(|s| Level {
                        role: RoleFilter::new(table, s.role.as_deref()),
                        name: s.name.as_deref(),
                    })
                    .collect()
            }),
            exact: exact(loc),
        }
    }

    /// Whether node `n` alone satisfies the locator's own fields (not `path`).
    fn node_ok(&self, n: &NodeView) -> bool {
        self.id.is_none_or(|id| n.id.as_deref() == Some(id)) && self.own.ok(n, self.exact)
    }

    fn path_ok(&self, nodes: &[NodeView], i: usize, segs: &[Level<'_>]) -> bool {
        let Some((last, rest)) = segs.split_last() else {
            return true;
        };
        if !last.ok(&nodes[i], self.exact) {
            return false;
        }
        if rest.is_empty() {
            return true;
        }
        let mut a = nodes[i].parent;
        while let Some(p) = a {
            if self.path_ok(nodes, p, rest) {
                return true;
            }
            a = nodes[p].parent;
        }
        false
    }
}

/// Indices of every node the locator matches, in pre-order (ignoring `occurrence`).
/// The root (index 0, the application itself) never matches.
pub fn find(nodes: &[NodeView], loc: &Locator) -> Vec<usize> {
    let Some(root) = nodes.first() else {
        return Vec::new();
    };
    let c = Compiled::new(root.role.table(), loc);
    let mut out: Vec<usize> = (1..nodes.len())
        .filter(|&i| match &c.path {
            Some(segs) => c.path_ok(nodes, i, segs) && c.node_ok(&nodes[i]),
            None => c.node_ok(&nodes[i]),
        })
        .collect();
    out.sort_by(|a, b| nodes[*a].order.cmp(&nodes[*b].order));
    out
}

/// Whether a locator needs accessible ids fetched.
pub fn needs_ids(loc: &Locator) -> bool {
    loc.automation_id.is_some()
}

/// How close a name is to the wanted one: equal ignoring case 3, one
/// containing the other 2, a shared word 1, else 0.
fn name_closeness(wanted: &str, actual: &str) -> u32 {
    let (w, a) = (wanted.trim().to_lowercase(), actual.trim().to_lowercase());
    if w.is_empty() || a.is_empty() {
        return 0;
    }
    if w == a {
        return 3;
    }
    if a.contains(&w) || w.contains(&a) {
        return 2;
    }
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|x| x.chars().count() >= 2)
            .map(str::to_string)
            .collect()
    };
    let aw = words(&a);
    u32::from(words(&w).iter().any(|x| aw.contains(x)))
}

/// For a locator that matched nothing: the nodes closest to what it asks
/// for, best first (at most `max`), and how many were close at all. A node
/// is close when its name resembles the wanted name, its role is the wanted
/// role, or its id resembles the wanted automationId; a locator naming both
/// a role and a name ranks nodes with both above either.
pub fn closest(nodes: &[NodeView], loc: &Locator, max: usize) -> (Vec<usize>, usize) {
    let Some(first) = nodes.first() else {
        return (Vec::new(), 0);
    };
    let last = loc.path.as_ref().and_then(|p| p.last());
    let role = loc.role.as_deref().or(last.and_then(|s| s.role.as_deref()));
    let role = role.and_then(|r| first.role.table().query(r).ok());
    let name = loc.name.as_deref().or(last.and_then(|s| s.name.as_deref()));
    let mut scored: Vec<(u32, usize)> = (1..nodes.len())
        .filter_map(|i| {
            let n = &nodes[i];
            let mut score = 0;
            if role.is_some_and(|q| q.matches(n.role)) {
                score += 2;
            }
            if let Some(w) = name {
                score += name_closeness(w, &n.name);
            }
            if let (Some(w), Some(id)) = (&loc.automation_id, &n.id) {
                score += name_closeness(w, id);
            }
            // A bare role match among many is weak; it still ranks.
            (score > 0).then_some((score, i))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| nodes[a.1].order.cmp(&nodes[b.1].order))
    });
    let total = scored.len();
    (
        scored.into_iter().take(max).map(|(_, i)| i).collect(),
        total,
    )
}

/// A node as a failure candidate: role, name and id.
pub fn candidate(n: &NodeView) -> qa_core::ElementCandidate {
    qa_core::ElementCandidate {
        role: Some(n.role.name().to_string()),
        name: Some(n.name.clone()).filter(|s| !s.is_empty()),
        detail: n
            .id
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|id| format!("automationId {id:?}")),
        ..Default::default()
    }
}

/// One line per candidate (`push button "7"`), at most `max` lines.
pub fn describe_candidates(nodes: &[NodeView], idx: &[usize], max: usize) -> String {
    let mut parts: Vec<String> = idx.iter().take(max).map(|&i| describe(&nodes[i])).collect();
    if idx.len() > max {
        parts.push(format!("… and {} more", idx.len() - max));
    }
    parts.join("; ")
}

/// `role "name"` (and `#id`) of one node.
pub fn describe(n: &NodeView) -> String {
    let mut s = format!("{} {:?}", n.role, truncate(&n.name, 60));
    if let Some(id) = n.id.as_deref().filter(|s| !s.is_empty()) {
        s.push_str(&format!(" #{id}"));
    }
    s
}

/// Cuts a string to `max` characters, marking the cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::roles::ATSPI;
    use qa_core::flow::PathSegment;

    fn n(role: &str, name: &str, parent: Option<usize>, order: &[u32]) -> NodeView {
        NodeView {
            role: ATSPI.native(role).unwrap(),
            name: name.into(),
            id: None,
            parent,
            order: order.to_vec(),
        }
    }

    fn tree() -> Vec<NodeView> {
        vec![
            n("application", "calc", None, &[]),
            n("frame", "Calculator", Some(0), &[0]),
            n("panel", "", Some(1), &[0, 0]),
            n("push button", "7", Some(2), &[0, 0, 0]),
            n("push button", "Add", Some(2), &[0, 0, 1]),
            n("frame", "Other", Some(0), &[1]),
            n("push button", "7", Some(5), &[1, 0]),
        ]
    }

    #[test]
    fn names_compare_with_whitespace_collapsed() {
        let t = vec![
            n("application", "mousepad", None, &[]),
            n("menu item", "To Uppercase      ", Some(0), &[0]),
            n("menu item", "Line  Numbers", Some(0), &[1]),
        ];
        let by_name = |name: &str, exact: bool| Locator {
            role: Some("menuitem".into()),
            name: Some(name.into()),
            exact: Some(exact),
            ..Default::default()
        };
        assert_eq!(find(&t, &by_name("To Uppercase", true)), vec![1]);
        assert_eq!(find(&t, &by_name(" To  Uppercase ", true)), vec![1]);
        assert_eq!(find(&t, &by_name("line numbers", false)), vec![2]);
        assert_eq!(find(&t, &by_name("Line Numbers", true)), vec![2]);
        assert!(find(&t, &by_name("To Upper", true)).is_empty());
        assert!(
            collapse("a b") == "a b" && matches!(collapse("a b"), std::borrow::Cow::Borrowed(_))
        );
        assert_eq!(collapse("\ta \n b  "), "a b");
    }

    #[test]
    fn role_and_name() {
        let t = tree();
        let l = Locator {
            role: Some("button".into()),
            name: Some("Add".into()),
            ..Default::default()
        };
        assert_eq!(find(&t, &l), vec![4]);
        let amb = Locator {
            role: Some("button".into()),
            name: Some("7".into()),
            ..Default::default()
        };
        assert_eq!(find(&t, &amb), vec![3, 6]);
        assert!(describe_candidates(&t, &[3, 6], 5).contains("push button \"7\""));
    }

    #[test]
    fn closest_ranks_role_and_name_above_either() {
        let t = tree();
        let l = Locator {
            role: Some("button".into()),
            name: Some("add".into()),
            ..Default::default()
        };
        let (idx, total) = closest(&t, &l, 2);
        assert_eq!(idx[0], 4, "the Add button first");
        assert_eq!(idx.len(), 2);
        assert_eq!(total, 3, "every push button is close");
        let none = Locator {
            name: Some("zzz".into()),
            ..Default::default()
        };
        assert_eq!(closest(&t, &none, 5), (vec![], 0));
        let c = candidate(&t[4]);
        assert_eq!(c.role.as_deref(), Some("push button"));
        assert_eq!(c.name.as_deref(), Some("Add"));
    }

    #[test]
    fn exact_by_default_substring_on_request() {
        let t = tree();
        let l = Locator {
            name: Some("Calc".into()),
            ..Default::default()
        };
        assert!(find(&t, &l).is_empty());
        let l = Locator {
            name: Some("calc".into()),
            exact: Some(false),
            ..Default::default()
        };
        assert_eq!(find(&t, &l), vec![1]);
    }

    #[test]
    fn path_from_window_down() {
        let t = tree();
        let l = Locator {
            path: Some(vec![
                PathSegment {
                    role: Some("window".into()),
                    name: Some("Other".into()),
                },
                PathSegment {
                    role: Some("button".into()),
                    name: Some("7".into()),
                },
            ]),
            ..Default::default()
        };
        assert_eq!(find(&t, &l), vec![6]);
    }

    #[test]
    fn automation_id() {
        let mut t = tree();
        t[4].id = Some("add-button".into());
        let l = Locator {
            automation_id: Some("add-button".into()),
            ..Default::default()
        };
        assert_eq!(find(&t, &l), vec![4]);
        assert!(needs_ids(&l));
    }
}

//! One role vocabulary for every desktop platform.
//!
//! A flow's `role` is either a **portable** role ([`Role`]: `button`,
//! `checkbox`, `textbox`, …, the same on every OS) or a **native** role of
//! the platform the flow runs on (AT-SPI's `push button`, UI Automation's
//! `CheckBox`, macOS's `AXButton`). Each platform has one [`RoleTable`]:
//! its native role names, the other spellings toolkits use for them, and
//! which native roles each portable role covers.
//!
//! Role names are parsed once into a [`RoleQuery`] and an element's role is
//! a [`NativeRole`] (an index into its table); matching compares those,
//! never text. So a role `ui-qa check` accepts matches its equivalents at
//! run time whatever name a toolkit reports: GTK 3 calls a push button
//! `push button` and GTK 4 `button`, and both are the same [`NativeRole`].

mod atspi;
mod ax;
mod uia;

pub use atspi::ATSPI;
pub use ax::AX;
pub use uia::UIA;

/// The portable roles: the same names on every platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// `button`.
    Button,
    /// `checkbox`.
    Checkbox,
    /// `textbox`: single- and multi-line text entry.
    Textbox,
    /// `dialog`.
    Dialog,
    /// `alert`.
    Alert,
    /// `window`: a top-level window (dialogs included).
    Window,
    /// `menuitem`.
    MenuItem,
    /// `menu`.
    Menu,
    /// `menubar`.
    MenuBar,
    /// `tab`.
    Tab,
    /// `tablist`.
    TabList,
    /// `list`.
    List,
    /// `listitem`.
    ListItem,
    /// `combobox`.
    Combobox,
    /// `slider`.
    Slider,
    /// `spinbutton`.
    SpinButton,
    /// `label`: static text.
    Label,
    /// `link`.
    Link,
    /// `radio`.
    Radio,
    /// `toggle`: a two-state button.
    Toggle,
    /// `switch`.
    Switch,
    /// `image` (also written `img`, as in WAI-ARIA).
    Image,
    /// `table`.
    Table,
    /// `row`.
    Row,
    /// `cell`.
    Cell,
    /// `columnheader`.
    ColumnHeader,
    /// `tree`.
    Tree,
    /// `treeitem`.
    TreeItem,
    /// `progressbar`.
    ProgressBar,
    /// `scrollbar`.
    ScrollBar,
    /// `toolbar`.
    Toolbar,
    /// `statusbar`.
    StatusBar,
    /// `heading`.
    Heading,
    /// `group`: a panel or grouping container.
    Group,
    /// `separator`.
    Separator,
    /// `tooltip`.
    Tooltip,
    /// `paragraph`.
    Paragraph,
    /// `document`.
    Document,
    /// `application`.
    Application,
}

impl Role {
    /// Every portable role, in the order of the guides.
    pub const ALL: &'static [Role] = &[
        Role::Button,
        Role::Checkbox,
        Role::Textbox,
        Role::Dialog,
        Role::Alert,
        Role::Window,
        Role::MenuItem,
        Role::Menu,
        Role::MenuBar,
        Role::Tab,
        Role::TabList,
        Role::List,
        Role::ListItem,
        Role::Combobox,
        Role::Slider,
        Role::SpinButton,
        Role::Label,
        Role::Link,
        Role::Radio,
        Role::Toggle,
        Role::Switch,
        Role::Image,
        Role::Table,
        Role::Row,
        Role::Cell,
        Role::ColumnHeader,
        Role::Tree,
        Role::TreeItem,
        Role::ProgressBar,
        Role::ScrollBar,
        Role::Toolbar,
        Role::StatusBar,
        Role::Heading,
        Role::Group,
        Role::Separator,
        Role::Tooltip,
        Role::Paragraph,
        Role::Document,
        Role::Application,
    ];

    /// The name a flow writes.
    pub fn name(self) -> &'static str {
        match self {
            Role::Button => "button",
            Role::Checkbox => "checkbox",
            Role::Textbox => "textbox",
            Role::Dialog => "dialog",
            Role::Alert => "alert",
            Role::Window => "window",
            Role::MenuItem => "menuitem",
            Role::Menu => "menu",
            Role::MenuBar => "menubar",
            Role::Tab => "tab",
            Role::TabList => "tablist",
            Role::List => "list",
            Role::ListItem => "listitem",
            Role::Combobox => "combobox",
            Role::Slider => "slider",
            Role::SpinButton => "spinbutton",
            Role::Label => "label",
            Role::Link => "link",
            Role::Radio => "radio",
            Role::Toggle => "toggle",
            Role::Switch => "switch",
            Role::Image => "image",
            Role::Table => "table",
            Role::Row => "row",
            Role::Cell => "cell",
            Role::ColumnHeader => "columnheader",
            Role::Tree => "tree",
            Role::TreeItem => "treeitem",
            Role::ProgressBar => "progressbar",
            Role::ScrollBar => "scrollbar",
            Role::Toolbar => "toolbar",
            Role::StatusBar => "statusbar",
            Role::Heading => "heading",
            Role::Group => "group",
            Role::Separator => "separator",
            Role::Tooltip => "tooltip",
            Role::Paragraph => "paragraph",
            Role::Document => "document",
            Role::Application => "application",
        }
    }

    /// The portable role a name stands for, in any case and with or
    /// without spaces, `_` or `-` (`menu item`, `MenuItem`, `img`).
    pub fn parse(name: &str) -> Option<Role> {
        let key = compact(name);
        if key == "img" {
            return Some(Role::Image);
        }
        Role::ALL.iter().copied().find(|r| r.name() == key)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name reduced for comparison: lowercase, without spaces, `_` or `-`.
pub fn compact(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// One platform's role vocabulary.
#[derive(Debug)]
pub struct RoleTable {
    /// The accessibility API (`AT-SPI`, `UI Automation`, `AX`).
    pub api: &'static str,
    /// Two native role names, as examples in messages.
    pub examples: &'static str,
    /// The native role names, canonical spelling; a role's id is its index.
    pub names: &'static [&'static str],
    /// The name of the role an element whose role cannot be read has.
    pub unknown: &'static str,
    /// Other spellings toolkits report or people write: `(alias, canonical)`.
    pub aliases: &'static [(&'static str, &'static str)],
    /// The native roles (canonical names) each portable role covers.
    pub portable: &'static [(Role, &'static [&'static str])],
    /// The native roles one acts on: an observation gives them a reference.
    pub actionable: &'static [&'static str],
    /// The native roles an observation shows for orientation (windows,
    /// dialogs, labels, menus), without a reference.
    pub orienting: &'static [&'static str],
}

/// A platform's native role: an index into its [`RoleTable`].
#[derive(Clone, Copy)]
pub struct NativeRole {
    table: &'static RoleTable,
    id: u16,
}

impl NativeRole {
    /// The role with id `id` in `table` (`None` outside it).
    pub fn from_id(table: &'static RoleTable, id: usize) -> Option<NativeRole> {
        (id < table.names.len()).then_some(NativeRole {
            table,
            id: id as u16,
        })
    }

    /// The table it belongs to.
    pub fn table(self) -> &'static RoleTable {
        self.table
    }

    /// The id (index in its table).
    pub fn id(self) -> usize {
        usize::from(self.id)
    }

    /// The canonical name (`push button`).
    pub fn name(self) -> &'static str {
        self.table.names[usize::from(self.id)]
    }

    /// Whether this role is one of those `portable` covers.
    pub fn is(self, portable: Role) -> bool {
        self.table
            .portable
            .iter()
            .filter(|(p, _)| *p == portable)
            .flat_map(|(_, names)| names.iter())
            .any(|n| *n == self.name())
    }
}

impl PartialEq for NativeRole {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.table, other.table) && self.id == other.id
    }
}

impl Eq for NativeRole {}

impl std::fmt::Debug for NativeRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{:?}", self.table.api, self.name())
    }
}

impl std::fmt::Display for NativeRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a flow's `role` asks for, parsed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleQuery {
    /// A portable role: any native role it covers.
    Portable(Role),
    /// Exactly one native role.
    Native(NativeRole),
}

impl RoleQuery {
    /// Whether an element with role `actual` satisfies the query.
    pub fn matches(self, actual: NativeRole) -> bool {
        match self {
            RoleQuery::Portable(p) => actual.is(p),
            RoleQuery::Native(n) => n == actual,
        }
    }
}

impl RoleTable {
    /// The native role a name stands for: a canonical name or an alias, in
    /// any case and with or without spaces, `_` or `-`.
    pub fn native(&'static self, name: &str) -> Option<NativeRole> {
        let key = compact(name);
        let canonical = self
            .aliases
            .iter()
            .find(|(a, _)| compact(a) == key)
            .map(|(_, c)| compact(c))
            .unwrap_or(key);
        self.names
            .iter()
            .position(|n| compact(n) == canonical)
            .and_then(|id| NativeRole::from_id(self, id))
    }

    /// The native role a toolkit's role name stands for, or this table's
    /// `unknown` role.
    pub fn native_or_unknown(&'static self, name: &str) -> NativeRole {
        self.native(name)
            .or_else(|| self.native(self.unknown))
            .unwrap_or(NativeRole { table: self, id: 0 })
    }

    /// Parses a flow's `role`: a portable role first, then a native one.
    /// An unknown name is an error naming the nearest known one.
    pub fn query(&'static self, role: &str) -> Result<RoleQuery, String> {
        if let Some(p) = Role::parse(role) {
            return Ok(RoleQuery::Portable(p));
        }
        if let Some(n) = self.native(role) {
            return Ok(RoleQuery::Native(n));
        }
        let names = Role::ALL
            .iter()
            .map(|r| r.name())
            .chain(self.names.iter().copied())
            .chain(self.aliases.iter().map(|(a, _)| *a));
        Err(format!(
            "unknown role {role:?}{}; use a portable role (button, checkbox, textbox, …) or a native {} role ({})",
            qa_core::flow::suggest::did_you_mean(&role.trim().to_lowercase(), names),
            self.api,
            self.examples
        ))
    }

    /// Whether an element's role satisfies a flow's `role` (an unknown
    /// name matches nothing; `ui-qa check` rejects it before a run).
    pub fn matches(&'static self, wanted: &str, actual: NativeRole) -> bool {
        self.query(wanted).is_ok_and(|q| q.matches(actual))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLES: [&RoleTable; 3] = [&ATSPI, &UIA, &AX];

    #[test]
    fn portable_names_parse_in_any_spelling() {
        for r in Role::ALL {
            assert_eq!(Role::parse(r.name()), Some(*r));
            assert_eq!(Role::parse(&r.name().to_uppercase()), Some(*r));
        }
        assert_eq!(Role::parse("menu item"), Some(Role::MenuItem));
        assert_eq!(Role::parse("Menu_Item"), Some(Role::MenuItem));
        assert_eq!(Role::parse("img"), Some(Role::Image));
        assert_eq!(Role::parse("push button"), None);
    }

    #[test]
    fn every_table_is_consistent() {
        for t in TABLES {
            let mut keys: Vec<String> = t.names.iter().map(|n| compact(n)).collect();
            keys.sort();
            let before = keys.len();
            keys.dedup();
            assert_eq!(before, keys.len(), "{}: two roles share a name", t.api);
            for (alias, canonical) in t.aliases {
                assert!(
                    t.names.contains(canonical),
                    "{}: alias {alias:?} names {canonical:?}, which is not a role",
                    t.api
                );
            }
            for (p, names) in t.portable {
                for n in *names {
                    assert!(
                        t.names.contains(n),
                        "{}: {p} covers {n:?}, which is not a role",
                        t.api
                    );
                }
            }
            for n in t.actionable.iter().chain(t.orienting) {
                assert!(t.names.contains(n), "{}: {n:?} is not a role", t.api);
            }
            for r in Role::ALL {
                assert!(
                    t.portable.iter().filter(|(p, _)| p == r).count() <= 1,
                    "{}: {r} listed twice",
                    t.api
                );
            }
            // Every name a table knows is accepted by `check`.
            for n in t.names.iter().chain(t.aliases.iter().map(|(a, _)| a)) {
                assert!(t.query(n).is_ok(), "{}: {n:?}", t.api);
            }
            assert_eq!(t.native_or_unknown("no such role").name(), t.unknown);
        }
    }

    #[test]
    fn a_native_name_and_its_aliases_are_one_role() {
        let gtk3 = ATSPI.native("push button").unwrap();
        let gtk4 = ATSPI.native("button").unwrap();
        assert_eq!(gtk3, gtk4);
        assert_eq!(gtk4.name(), "push button");
        assert!(ATSPI.matches("push button", gtk4));
        assert!(ATSPI.matches("Push_Button", gtk4));
        assert!(ATSPI.matches("button", gtk3));
        assert!(ATSPI.matches("pushbutton", gtk3));
        assert_eq!(UIA.native("CheckBox"), UIA.native("check box"));
        assert!(UIA.matches("checkbox", UIA.native("CheckBox").unwrap()));
        assert!(AX.matches("button", AX.native("AXButton").unwrap()));
        assert!(AX.matches("axbutton", AX.native("AXButton").unwrap()));
    }

    #[test]
    fn portable_roles_cover_their_platform_roles() {
        let r = |t: &'static RoleTable, n: &str| t.native(n).unwrap();
        assert!(ATSPI.matches("checkbox", r(&ATSPI, "check box")));
        assert!(ATSPI.matches("textbox", r(&ATSPI, "text")));
        assert!(ATSPI.matches("textbox", r(&ATSPI, "entry")));
        assert!(ATSPI.matches("window", r(&ATSPI, "frame")));
        assert!(ATSPI.matches("Dialog", r(&ATSPI, "dialog")));
        assert!(!ATSPI.matches("button", r(&ATSPI, "toggle button")));
        assert!(!ATSPI.matches("label", r(&ATSPI, "push button")));
        assert!(ATSPI.matches("toggle button", r(&ATSPI, "toggle button")));
        assert!(ATSPI.matches("image", r(&ATSPI, "icon")));
        assert!(ATSPI.matches("img", r(&ATSPI, "image")));
        assert!(UIA.matches("textbox", r(&UIA, "Edit")));
        assert!(UIA.matches("link", r(&UIA, "Hyperlink")));
        assert!(AX.matches("textbox", r(&AX, "AXTextArea")));
        assert!(AX.matches("window", r(&AX, "AXWindow")));
        assert!(!ATSPI.matches("no such role", r(&ATSPI, "push button")));
    }

    #[test]
    fn unknown_role_names_are_refused_with_a_suggestion() {
        assert!(ATSPI
            .query("buton")
            .unwrap_err()
            .contains("did you mean \"button\""));
        let e = ATSPI.query("zzzz").unwrap_err();
        assert!(e.contains("AT-SPI") && e.contains("push button"), "{e}");
        let e = UIA.query("ChekBox").unwrap_err();
        assert!(e.contains("UI Automation"), "{e}");
        assert!(AX.query("AXButon").unwrap_err().contains("AXButton"));
    }
}

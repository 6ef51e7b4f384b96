//! Portable role names and their AT-SPI equivalents (platform-neutral, pure).

/// Portable (ARIA-style) role names and the AT-SPI role names each covers.
pub const PORTABLE_ROLES: &[(&str, &[&str])] = &[
    ("button", &["push button", "push button menu", "button"]),
    ("checkbox", &["check box", "check menu item", "checkbox"]),
    (
        "textbox",
        &[
            "text",
            "entry",
            "password text",
            "editbar",
            "text box",
            "search box",
            "spin button",
        ],
    ),
    (
        "dialog",
        &[
            "dialog",
            "alert",
            "file chooser",
            "color chooser",
            "font chooser",
        ],
    ),
    ("alert", &["alert", "notification"]),
    ("window", &["frame", "window", "dialog", "alert"]),
    (
        "menuitem",
        &[
            "menu item",
            "check menu item",
            "radio menu item",
            "tearoff menu item",
        ],
    ),
    ("menu", &["menu", "popup menu"]),
    ("menubar", &["menu bar"]),
    ("tab", &["page tab"]),
    ("tablist", &["page tab list"]),
    ("list", &["list", "list box"]),
    ("listitem", &["list item"]),
    ("combobox", &["combo box"]),
    ("slider", &["slider"]),
    ("spinbutton", &["spin button"]),
    ("label", &["label", "static", "caption"]),
    ("link", &["link"]),
    ("radio", &["radio button", "radio menu item"]),
    ("toggle", &["toggle button", "switch"]),
    ("switch", &["switch", "toggle button"]),
    ("image", &["image", "icon"]),
    ("table", &["table", "tree table"]),
    ("row", &["table row"]),
    ("cell", &["table cell"]),
    ("columnheader", &["column header", "table column header"]),
    ("tree", &["tree", "tree table"]),
    ("treeitem", &["tree item", "list item", "table cell"]),
    ("progressbar", &["progress bar", "level bar"]),
    ("scrollbar", &["scroll bar"]),
    ("toolbar", &["tool bar"]),
    ("statusbar", &["status bar"]),
    ("heading", &["heading"]),
    (
        "group",
        &["panel", "grouping", "filler", "section", "group"],
    ),
    ("separator", &["separator"]),
    ("tooltip", &["tool tip"]),
    ("paragraph", &["paragraph"]),
    (
        "document",
        &["document frame", "document web", "document text"],
    ),
    ("application", &["application"]),
];

/// Normalizes a role as written by a person: lowercase, `_`/`-` as spaces.
pub fn normalize(role: &str) -> String {
    role.trim().to_ascii_lowercase().replace(['_', '-'], " ")
}

/// The AT-SPI role names a flow's `role` stands for. A portable name maps to
/// its list; anything else is taken as an AT-SPI role name itself.
pub fn platform_roles(role: &str) -> Vec<String> {
    let n = normalize(role);
    let compact = n.replace(' ', "");
    for (portable, atspi) in PORTABLE_ROLES {
        if *portable == compact {
            return atspi.iter().map(|s| s.to_string()).collect();
        }
    }
    vec![n]
}

/// Whether an element's AT-SPI role name satisfies a flow's `role`.
pub fn role_matches(wanted: &str, actual: &str) -> bool {
    let actual = normalize(actual);
    platform_roles(wanted).contains(&actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_and_platform_names() {
        assert!(role_matches("button", "push button"));
        assert!(role_matches("push button", "push button"));
        assert!(role_matches("push_button", "push button"));
        assert!(role_matches("checkbox", "check box"));
        assert!(role_matches("check box", "check box"));
        assert!(role_matches("textbox", "text"));
        assert!(role_matches("textbox", "entry"));
        assert!(role_matches("window", "frame"));
        assert!(role_matches("Dialog", "dialog"));
        assert!(!role_matches("button", "toggle button"));
        assert!(!role_matches("label", "push button"));
        assert!(role_matches("toggle button", "toggle button"));
    }
}

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

/// Every AT-SPI role name: the names at-spi2-core gives (`push button`,
/// `page tab`, as Accerciser and dogtail show them; those in
/// [`PORTABLE_ROLES`]) and the atspi crate's names for every role.
fn atspi_role_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = PORTABLE_ROLES
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .chain(
            (0..=200u32)
                .filter_map(|n| atspi::Role::try_from(n).ok())
                .map(|r| r.name()),
        )
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `Ok` when `role` is a portable role name or an AT-SPI role name;
/// otherwise why, with the nearest of them.
pub fn check_role(role: &str) -> Result<(), String> {
    let n = normalize(role);
    let compact = n.replace(' ', "");
    if PORTABLE_ROLES.iter().any(|(p, _)| *p == compact) {
        return Ok(());
    }
    let atspi = atspi_role_names();
    if atspi.contains(&n.as_str()) {
        return Ok(());
    }
    let names = PORTABLE_ROLES
        .iter()
        .map(|(p, _)| *p)
        .chain(atspi.iter().copied());
    // AT-SPI names without their spaces (`pushbutton`) or other tools'.
    if let Some(a) = atspi.iter().find(|a| a.replace(' ', "") == compact) {
        return Err(format!("unknown role {role:?}; did you mean {a:?}?"));
    }
    Err(format!(
        "unknown role {role:?}{}; use a portable role (button, checkbox, textbox, …) or an AT-SPI role name (push button, check box, …)",
        qa_core::flow::suggest::did_you_mean(&n, names)
    ))
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
    fn role_names_are_checked_with_a_suggestion() {
        assert!(check_role("button").is_ok());
        assert!(check_role("push button").is_ok());
        assert!(check_role("Push_Button").is_ok());
        assert!(check_role("page tab").is_ok());
        assert!(check_role("pushbutton")
            .unwrap_err()
            .contains("\"push button\""));
        assert!(check_role("buton")
            .unwrap_err()
            .contains("did you mean \"button\""));
        assert!(check_role("zzzz").is_err());
    }

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

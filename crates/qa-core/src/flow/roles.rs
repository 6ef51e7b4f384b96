//! The portable role names: WAI-ARIA 1.2 roles, which every driver maps to
//! its platform's roles.

/// WAI-ARIA 1.2 roles (abstract roles excluded).
pub const ARIA_ROLES: &[&str] = &[
    "alert",
    "alertdialog",
    "application",
    "article",
    "banner",
    "blockquote",
    "button",
    "caption",
    "cell",
    "checkbox",
    "code",
    "columnheader",
    "combobox",
    "complementary",
    "contentinfo",
    "definition",
    "deletion",
    "dialog",
    "directory",
    "document",
    "emphasis",
    "feed",
    "figure",
    "form",
    "generic",
    "grid",
    "gridcell",
    "group",
    "heading",
    "img",
    "insertion",
    "link",
    "list",
    "listbox",
    "listitem",
    "log",
    "main",
    "marquee",
    "math",
    "menu",
    "menubar",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "meter",
    "navigation",
    "none",
    "note",
    "option",
    "paragraph",
    "presentation",
    "progressbar",
    "radio",
    "radiogroup",
    "region",
    "row",
    "rowgroup",
    "rowheader",
    "scrollbar",
    "search",
    "searchbox",
    "separator",
    "slider",
    "spinbutton",
    "status",
    "strong",
    "subscript",
    "superscript",
    "switch",
    "tab",
    "table",
    "tablist",
    "tabpanel",
    "term",
    "textbox",
    "time",
    "timer",
    "toolbar",
    "tooltip",
    "tree",
    "treegrid",
    "treeitem",
];

/// Role names other tools show (AT-SPI, UI Automation, Accessibility
/// Inspector) and the ARIA role a flow writes for them.
pub const PLATFORM_ALIASES: &[(&str, &str)] = &[
    ("pushbutton", "button"),
    ("togglebutton", "button"),
    ("radiobutton", "radio"),
    ("text", "textbox"),
    ("entry", "textbox"),
    ("edit", "textbox"),
    ("passwordtext", "textbox"),
    ("pagetab", "tab"),
    ("pagetablist", "tablist"),
    ("image", "img"),
    ("icon", "img"),
    ("hyperlink", "link"),
    ("statictext", "paragraph"),
    ("tablecell", "cell"),
    ("tablerow", "row"),
    ("frame", "dialog"),
];

/// The ARIA role another tool's role name stands for (`push button` →
/// `button`).
pub fn aria_alias(role: &str) -> Option<&'static str> {
    let compact = role.to_ascii_lowercase().replace([' ', '_', '-'], "");
    PLATFORM_ALIASES
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(&compact))
        .map(|(_, v)| *v)
}

/// `Ok` for an ARIA role; otherwise why, with the nearest role.
pub fn check_aria_role(role: &str) -> Result<(), String> {
    if ARIA_ROLES.contains(&role) {
        return Ok(());
    }
    let lower = role.to_ascii_lowercase();
    if ARIA_ROLES.contains(&lower.as_str()) {
        return Err(format!("role {role:?} is written in lower case: {lower:?}"));
    }
    let compact = lower.replace([' ', '_', '-'], "");
    if ARIA_ROLES.contains(&compact.as_str()) {
        return Err(format!("unknown role {role:?}; did you mean {compact:?}?"));
    }
    if let Some(a) = aria_alias(role) {
        return Err(format!(
            "{role:?} is another tool's role name; flows use the WAI-ARIA name {a:?}"
        ));
    }
    Err(format!(
        "unknown role {role:?}{}; roles are WAI-ARIA role names such as button, link, textbox, checkbox, heading",
        super::suggest::did_you_mean(&lower, ARIA_ROLES.iter().copied())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aria_roles_and_near_misses() {
        assert!(check_aria_role("button").is_ok());
        assert!(check_aria_role("buton")
            .unwrap_err()
            .contains("did you mean \"button\""));
        assert!(check_aria_role("Button")
            .unwrap_err()
            .contains("\"button\""));
        assert!(check_aria_role("push button")
            .unwrap_err()
            .contains("WAI-ARIA name \"button\""));
        assert!(check_aria_role("spin_button")
            .unwrap_err()
            .contains("\"spinbutton\""));
        assert!(check_aria_role("zzzz")
            .unwrap_err()
            .starts_with("unknown role \"zzzz\"; roles are"));
    }
}

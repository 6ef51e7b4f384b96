//! The names listings and snapshots show for a page's elements: the
//! accessible name the page helper computes — the one `role` + `name`
//! locators match — rather than Chromium's, which differs in places (a
//! `<wbr>` is a space in Chromium's name, nothing in the helper's), so that
//! a name as shown is one a flow can write.

use crate::cdp::commands::{CallArgument, CallFunctionOn, ReleaseObjectGroup, ResolveNode};
use crate::page::{DomOp, Page, DOM_JS};
use qa_core::Deadline;
use serde::Deserialize;

/// Roles one acts on: they get a reference in a listing, and their names
/// are the locators' in listings and snapshots alike.
pub(super) const ACTIONABLE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// The object group of the element references taken.
const GROUP: &str = "ui-qa-names";

/// One element as locators see it.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct LocatorName {
    /// Its role (`None`: none a `role` locator finds).
    pub role: Option<String>,
    /// Its accessible name (at most 4096 characters).
    pub name: String,
}

impl LocatorName {
    /// The name, when a `role` locator can find the element at all
    /// (otherwise no locator matches a name of it).
    pub fn by_role(self) -> Option<String> {
        self.role
            .filter(|r| !r.is_empty() && r != "none")
            .map(|_| self.name)
    }
}

/// For each DOM node (by backend id): its role and name as locators see
/// them, read for all of them in one call on references to them; `None`
/// for a node that is not an element, that the page no longer has, or that
/// was not reached before `deadline`.
pub(super) async fn locator_names(
    page: &Page,
    backends: &[i64],
    deadline: Deadline,
) -> Vec<Option<LocatorName>> {
    let mut out: Vec<Option<LocatorName>> = vec![None; backends.len()];
    let mut args = vec![CallArgument::Value(serde_json::json!(DomOp::Names.name()))];
    let mut asked = Vec::new();
    let mut this = None;
    for (i, &backend) in backends.iter().enumerate() {
        if deadline.expired() {
            break;
        }
        let cmd = ResolveNode {
            backend_node_id: backend,
            object_group: GROUP,
            execution_context_id: None,
        };
        let Some(id) = page
            .send_until(&cmd, deadline)
            .await
            .ok()
            .and_then(|n| n.object.object_id)
        else {
            continue;
        };
        this.get_or_insert_with(|| id.clone());
        args.push(CallArgument::ObjectId(id));
        asked.push(i);
    }
    if let Some(object_id) = this {
        let cmd = CallFunctionOn {
            object_id,
            function_declaration: format!(
                "function (op, ...nodes) {{ return ({DOM_JS})(op, {{}}, {{ nodes }}); }}"
            ),
            arguments: Some(args),
            await_promise: Some(true),
            return_by_value: Some(true),
        };
        let names = match page.send_until(&cmd, deadline).await {
            Ok(r) if r.exception_details.is_none() => r
                .result
                .value
                .and_then(|v| serde_json::from_value::<Vec<Option<LocatorName>>>(v).ok()),
            _ => None,
        };
        if let Some(names) = names.filter(|n| n.len() == asked.len()) {
            for (i, name) in asked.into_iter().zip(names) {
                out[i] = name;
            }
        }
    }
    let release = ReleaseObjectGroup {
        object_group: GROUP,
    };
    let _ = page.send_until(&release, Deadline::after_ms(1000)).await;
    out
}

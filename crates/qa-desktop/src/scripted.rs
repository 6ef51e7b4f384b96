//! A scripted [`DesktopPlatform`] for unit tests of what the session and
//! the verdicts decide over a tree: each walk answers from a script.

use crate::node::tests::node;
use crate::node::{Fields, Node};
use crate::platform::{Activated, DesktopPlatform, Exit, Stream, TopWindow, WindowShot};
use qa_core::flow::Locator;
use qa_core::keys::KeyChord;
use qa_core::{CloseResult, Deadline, DriverError};
use std::collections::VecDeque;
use std::sync::Mutex;

/// A platform whose walks answer from a script: each walk takes the
/// next entry, a tree (`Some`) or no answer at all (`None`: the walk
/// never finishes, as a read the toolkit does not reply to); after the
/// script it never answers.
pub(crate) struct Scripted {
    walks: Mutex<VecDeque<Option<Vec<Node<String>>>>>,
    last: Mutex<Vec<Node<String>>>,
}

impl Scripted {
    pub(crate) fn new(walks: Vec<Option<Vec<Node<String>>>>) -> Self {
        Scripted {
            walks: Mutex::new(walks.into()),
            last: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait::async_trait]
impl DesktopPlatform for Scripted {
    type Element = String;
    fn root(&self) -> String {
        "app".into()
    }
    fn application(&self) -> (String, u32) {
        ("app".into(), 1)
    }
    async fn walk(&self, _: &String, _: Fields, _: usize) -> (Vec<Node<String>>, bool) {
        let next = self.walks.lock().unwrap().pop_front().flatten();
        match next {
            Some(nodes) => {
                *self.last.lock().unwrap() = nodes.clone();
                (nodes, false)
            }
            None => std::future::pending().await,
        }
    }
    async fn fetch(&self, e: &String, _: Fields) -> Option<Node<String>> {
        let last = self.last.lock().unwrap();
        last.iter().find(|n| &n.element == e).cloned()
    }
    async fn windows(&self) -> Vec<TopWindow> {
        unreachable!()
    }
    async fn activate_window(&self) -> Result<String, DriverError> {
        unreachable!()
    }
    async fn activate(&self, _: &Node<String>) -> Result<Activated, DriverError> {
        unreachable!()
    }
    async fn click(&self, _: &Node<String>) -> Result<String, DriverError> {
        unreachable!()
    }
    async fn select(&self, _: &Node<String>) -> Result<String, DriverError> {
        unreachable!()
    }
    async fn set_value(
        &self,
        _: &Node<String>,
        _: &str,
        _: Deadline,
    ) -> Result<String, DriverError> {
        unreachable!()
    }
    async fn focus(&self, _: &Node<String>) -> Result<(), DriverError> {
        unreachable!()
    }
    async fn type_text(&self, _: &str) -> Result<(), DriverError> {
        unreachable!()
    }
    async fn press(&self, _: KeyChord) -> Result<(), DriverError> {
        unreachable!()
    }
    async fn screenshot(&self) -> Result<WindowShot, DriverError> {
        unreachable!()
    }
    fn exit(&mut self) -> Exit {
        Exit::Running
    }
    fn output(&self, _: Stream) -> Option<Vec<u8>> {
        None
    }
    async fn close(self: Box<Self>, _: Deadline) -> CloseResult {
        unreachable!()
    }
}

/// An application whose status label reads `status`.
pub(crate) fn app(status: &str) -> Vec<Node<String>> {
    let mut label = node("label", "status", Some(1), &[0, 0]);
    label.text = Some(status.into());
    let mut nodes = vec![
        node("application", "app", None, &[]),
        node("frame", "Main", Some(0), &[0]),
        label,
    ];
    nodes[0].child_idx = vec![1];
    nodes[1].child_idx = vec![2];
    nodes
}

/// The locator of the status label of [`app`].
pub(crate) fn status_label() -> Locator {
    Locator {
        role: Some("label".into()),
        name: Some("status".into()),
        ..Default::default()
    }
}

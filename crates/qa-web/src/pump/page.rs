//! Page life: load events per page, the default execution context of
//! every frame (so steps can evaluate in a frame that navigated), and
//! JavaScript dialogs (handled as armed by the step, dismissed otherwise).

use super::session_of;
use crate::cdp::commands::HandleJavaScriptDialog;
use crate::cdp::events::{ContextCreated, ContextDestroyed, DialogOpening};
use crate::cdp::CdpEvent;
use crate::shared::Shared;
use crate::state::DialogSeen;
use qa_core::{Note, NoteKind};

/// `Page.loadEventFired`.
pub(super) fn load_event(sh: &Shared, ev: &CdpEvent) {
    *sh.st().loads.entry(session_of(ev)).or_insert(0) += 1;
    sh.bump();
}

/// `Runtime.executionContextCreated`: remembers a frame's default context.
pub(super) fn context_created(sh: &Shared, ev: &CdpEvent) {
    let c = ev.params::<ContextCreated>().context;
    if let (Some(id), Some(frame), true) = (c.id, c.aux_data.frame_id, c.aux_data.is_default) {
        sh.st().frame_contexts.insert((session_of(ev), frame), id);
        sh.bump();
    }
}

/// `Runtime.executionContextDestroyed`.
pub(super) fn context_destroyed(sh: &Shared, ev: &CdpEvent) {
    if let Some(id) = ev.params::<ContextDestroyed>().execution_context_id {
        let session = session_of(ev);
        sh.st()
            .frame_contexts
            .retain(|(s, _), c| !(*s == session && *c == id));
    }
}

/// `Runtime.executionContextsCleared`.
pub(super) fn contexts_cleared(sh: &Shared, ev: &CdpEvent) {
    let session = session_of(ev);
    sh.st().frame_contexts.retain(|(s, _), _| *s != session);
}

/// `Page.javascriptDialogOpening`: answered as the step armed it, or
/// dismissed (and noted) when nothing expected it.
pub(super) fn dialog_opening(sh: &Shared, ev: &CdpEvent) {
    let p: DialogOpening = ev.params();
    let kind = p.kind.unwrap_or_else(|| "alert".into());
    let mut st = sh.st();
    let (accept, prompt_text) = match st.armed_dialog.take() {
        Some(a) => (a.accept.unwrap_or(false), a.prompt_text),
        None => {
            st.notes.push(Note::new(
                NoteKind::Dialog,
                format!("dismissed an unexpected {kind} dialog"),
            ));
            (false, None)
        }
    };
    st.dialogs.push(DialogSeen {
        kind,
        message: p.message,
    });
    drop(st);
    sh.bump();
    let cdp = sh.cdp.clone();
    let session = session_of(ev);
    tokio::spawn(async move {
        let answer = HandleJavaScriptDialog {
            accept,
            prompt_text,
        };
        let _ = cdp.call_typed(Some(&session), &answer).await;
    });
}

//! The event pump: one task reads every CDP event of the run, hands it to
//! the steps that tapped its kind, and keeps the page state current — one
//! handler per event family: targets (attach, contain, detach, crash),
//! containment of requests, the network log, the console log, and page
//! life (loads, execution contexts, dialogs). Waiters watch the change
//! counter instead of polling.

mod console;
mod containment;
mod network;
mod page;
mod targets;

use crate::cdp::{CdpEvent, Event};
use crate::shared::Shared;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Runs the pump until the connection closes (then the page counts as
/// crashed: nothing can be driven any more).
pub(crate) fn spawn_pump(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<CdpEvent>) {
    tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            shared.forward(&ev);
            handle(&shared, &ev);
            shared.handled_one();
        }
        shared.st().crashed = true;
        shared.bump();
    });
}

/// Dispatches one event to its family.
fn handle(sh: &Arc<Shared>, ev: &CdpEvent) {
    let Some(kind) = ev.event else {
        return;
    };
    match kind {
        Event::TargetTargetCreated => targets::created(sh, ev),
        Event::TargetAttachedToTarget => targets::attached(sh, ev),
        Event::TargetDetachedFromTarget => targets::detached(sh, ev),
        Event::InspectorTargetCrashed => targets::crashed(sh, ev),
        // The transport fails calls to a crashed or detached session at
        // once; the page state learns of it from the two events above.
        Event::TargetTargetCrashed | Event::InspectorDetached => {}
        Event::FetchRequestPaused => containment::request_paused(sh, ev),
        Event::RuntimeBindingCalled => containment::binding_called(sh, ev),
        Event::NetworkRequestWillBeSent => network::will_be_sent(sh, ev),
        Event::NetworkResponseReceived => network::response_received(sh, ev),
        Event::NetworkLoadingFinished => network::finished(sh, ev, false),
        Event::NetworkLoadingFailed => network::finished(sh, ev, true),
        Event::RuntimeConsoleApiCalled => console::api_called(sh, ev),
        Event::RuntimeExceptionThrown => console::exception_thrown(sh, ev),
        Event::LogEntryAdded => console::log_entry(sh, ev),
        Event::PageLoadEventFired => page::load_event(sh, ev),
        Event::RuntimeExecutionContextCreated => page::context_created(sh, ev),
        Event::RuntimeExecutionContextDestroyed => page::context_destroyed(sh, ev),
        Event::RuntimeExecutionContextsCleared => page::contexts_cleared(sh, ev),
        Event::PageJavascriptDialogOpening => page::dialog_opening(sh, ev),
        Event::PageScreencastFrame => crate::record::frame(sh, ev),
        // Read only by the steps that tap them.
        Event::InputDragIntercepted
        | Event::BrowserDownloadWillBegin
        | Event::BrowserDownloadProgress
        | Event::TracingTracingComplete
        | Event::HeapProfilerAddHeapSnapshotChunk => {}
    }
}

/// The event's session (`""`: the browser session).
fn session_of(ev: &CdpEvent) -> String {
    ev.session.clone().unwrap_or_default()
}

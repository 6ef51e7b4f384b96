//! The console log: `console.*` calls, uncaught exceptions and the
//! browser's own log entries (bounded texts; entries caused by ui-qa's
//! containment are marked and never count as page errors).

use crate::cdp::events::{ConsoleApiCalled, EntryAdded, ExceptionThrown};
use crate::cdp::CdpEvent;
use crate::shared::Shared;
use crate::state::{bounded, push_bounded, ConsoleEntry, ConsoleLevel};

/// `Runtime.consoleAPICalled`.
pub(super) fn api_called(sh: &Shared, ev: &CdpEvent) {
    let p: ConsoleApiCalled = ev.params();
    let level = ConsoleLevel::of_console_call(p.kind.as_deref().unwrap_or("log"));
    let text: Vec<String> = p.args.iter().map(|a| a.text()).collect();
    push(sh, level, &text.join(" "), "console", false);
}

/// `Runtime.exceptionThrown`.
pub(super) fn exception_thrown(sh: &Shared, ev: &CdpEvent) {
    let p: ExceptionThrown = ev.params();
    let text = p
        .exception_details
        .describe()
        .unwrap_or("uncaught exception")
        .to_string();
    push(sh, ConsoleLevel::Error, &text, "exception", false);
}

/// `Log.entryAdded`.
pub(super) fn log_entry(sh: &Shared, ev: &CdpEvent) {
    let e = ev.params::<EntryAdded>().entry;
    let containment = e.text.contains("ERR_BLOCKED_BY_CLIENT");
    let level = ConsoleLevel::of_log_entry(e.level.as_deref().unwrap_or("info"));
    push(
        sh,
        level,
        &e.text,
        e.source.as_deref().unwrap_or("other"),
        containment,
    );
}

fn push(sh: &Shared, level: ConsoleLevel, text: &str, source: &str, containment: bool) {
    let e = ConsoleEntry {
        at_ms: sh.now_ms(),
        level,
        text: bounded(text, 2000),
        source: source.to_string(),
        containment,
    };
    {
        let mut guard = sh.st();
        let st = &mut *guard;
        push_bounded(&mut st.console, e, &mut st.dropped);
    }
    sh.bump();
}

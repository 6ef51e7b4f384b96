//! The DevTools events the driver listens to: their names as one enum
//! (parsed once, when an event arrives) and their parameters as lenient
//! typed structs (a field Chromium leaves out takes its default, as the
//! protocol documents optional fields).

use serde::Deserialize;
use serde_json::Value;

macro_rules! events {
    ( $( $(#[$doc:meta])* $variant:ident = $name:literal, )* ) => {
        /// A DevTools event the driver handles, by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Event {
            $( $(#[$doc])* $variant, )*
        }

        impl Event {
            /// The protocol's method name, e.g. `Fetch.requestPaused`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Event::$variant => $name, )*
                }
            }

            /// The event of a method name (`None`: one the driver ignores).
            pub fn parse(method: &str) -> Option<Event> {
                match method {
                    $( $name => Some(Event::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

events! {
    /// A request paused by Fetch interception.
    FetchRequestPaused = "Fetch.requestPaused",
    /// A target was created (discovery; an attached run's own context's
    /// pages are attached from it).
    TargetTargetCreated = "Target.targetCreated",
    /// A target was auto-attached (flat session).
    TargetAttachedToTarget = "Target.attachedToTarget",
    /// A target's session detached.
    TargetDetachedFromTarget = "Target.detachedFromTarget",
    /// A target crashed (browser session).
    TargetTargetCrashed = "Target.targetCrashed",
    /// The session's own target crashed.
    InspectorTargetCrashed = "Inspector.targetCrashed",
    /// The session was detached by the browser.
    InspectorDetached = "Inspector.detached",
    /// A request is about to be sent (or a redirect hop).
    NetworkRequestWillBeSent = "Network.requestWillBeSent",
    /// A response arrived.
    NetworkResponseReceived = "Network.responseReceived",
    /// A request finished loading.
    NetworkLoadingFinished = "Network.loadingFinished",
    /// A request failed.
    NetworkLoadingFailed = "Network.loadingFailed",
    /// A page called a binding added with `Runtime.addBinding`.
    RuntimeBindingCalled = "Runtime.bindingCalled",
    /// A `console.*` call.
    RuntimeConsoleApiCalled = "Runtime.consoleAPICalled",
    /// An uncaught exception.
    RuntimeExceptionThrown = "Runtime.exceptionThrown",
    /// A browser log entry (network errors, interventions, …).
    LogEntryAdded = "Log.entryAdded",
    /// A page's load event.
    PageLoadEventFired = "Page.loadEventFired",
    /// An execution context was created.
    RuntimeExecutionContextCreated = "Runtime.executionContextCreated",
    /// An execution context was destroyed.
    RuntimeExecutionContextDestroyed = "Runtime.executionContextDestroyed",
    /// Every execution context of the session was cleared.
    RuntimeExecutionContextsCleared = "Runtime.executionContextsCleared",
    /// A JavaScript dialog opened.
    PageJavascriptDialogOpening = "Page.javascriptDialogOpening",
    /// A screencast frame (acknowledge it for the next).
    PageScreencastFrame = "Page.screencastFrame",
    /// An HTML5 drag was intercepted (`Input.setInterceptDrags`).
    InputDragIntercepted = "Input.dragIntercepted",
    /// A download is about to begin.
    BrowserDownloadWillBegin = "Browser.downloadWillBegin",
    /// A download made progress, completed or was canceled.
    BrowserDownloadProgress = "Browser.downloadProgress",
    /// A trace finished and its stream is ready.
    TracingTracingComplete = "Tracing.tracingComplete",
    /// A chunk of a heap snapshot.
    HeapProfilerAddHeapSnapshotChunk = "HeapProfiler.addHeapSnapshotChunk",
}

/// `Target.TargetInfo` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TargetInfo {
    /// Target id.
    pub target_id: String,
    /// `page`, `iframe`, `worker`, `browser`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The browser context it belongs to.
    pub browser_context_id: String,
    /// Its URL (for a page: the document's, or the one it is opening).
    pub url: String,
    /// The target that opened it (a popup's opener).
    pub opener_id: String,
    /// Whether a client is attached to it.
    pub attached: bool,
}

/// `Target.targetCreated`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TargetCreated {
    /// The new target.
    pub target_info: TargetInfo,
}

/// `Target.attachedToTarget`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AttachedToTarget {
    /// The new flat session.
    pub session_id: String,
    /// The attached target.
    pub target_info: TargetInfo,
    /// Paused until `Runtime.runIfWaitingForDebugger`.
    pub waiting_for_debugger: bool,
}

/// `Target.detachedFromTarget`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DetachedFromTarget {
    /// The session that detached.
    pub session_id: String,
}

/// `Target.targetCrashed`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TargetCrashed {
    /// The crashed target.
    pub target_id: String,
}

/// `Network.Request` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Request {
    /// Full URL.
    pub url: String,
    /// HTTP method.
    pub method: String,
    /// Request headers (as the interception sees them; no cookies).
    pub headers: std::collections::BTreeMap<String, String>,
}

/// `Network.Response` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Response {
    /// HTTP status.
    pub status: Option<u64>,
}

/// `Fetch.requestPaused`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RequestPaused {
    /// Fetch request id.
    pub request_id: String,
    /// The request.
    pub request: Request,
    /// `Document`, `Script`, …
    pub resource_type: String,
    /// The frame that made it.
    pub frame_id: String,
}

/// `Network.requestWillBeSent`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RequestWillBeSent {
    /// Network request id (per session).
    pub request_id: String,
    /// The request.
    pub request: Request,
    /// Resource type (`Document`, `XHR`, …; absent: `Other`).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Set on a redirect hop: the previous hop's response.
    pub redirect_response: Option<Response>,
    /// What started the request.
    pub initiator: Initiator,
}

/// `Network.Initiator` (the field the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Initiator {
    /// `parser`, `script`, `preload`, `other`, …
    #[serde(rename = "type")]
    pub kind: String,
}

/// `Network.responseReceived`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResponseReceived {
    /// Network request id.
    pub request_id: String,
    /// The response.
    pub response: Response,
}

/// `Network.loadingFinished` and `Network.loadingFailed`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LoadingDone {
    /// Network request id.
    pub request_id: String,
    /// Why it failed (`loadingFailed` only).
    pub error_text: Option<String>,
}

/// `Runtime.bindingCalled`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BindingCalled {
    /// The binding's name.
    pub name: String,
    /// What the page passed.
    pub payload: String,
}

/// `Runtime.consoleAPICalled`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConsoleApiCalled {
    /// `log`, `error`, `warning`, …
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The call's arguments (remote objects).
    pub args: Vec<RemoteObject>,
}

/// A `Runtime.RemoteObject`: a console argument, an exception, the result
/// of an evaluation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RemoteObject {
    /// Object type.
    #[serde(rename = "type")]
    pub kind: String,
    /// `node`, `array`, … for objects.
    pub subtype: Option<String>,
    /// A primitive value, or the whole value with `returnByValue`.
    pub value: Option<Value>,
    /// `NaN`, `Infinity`, `-0`, bigints.
    pub unserializable_value: Option<String>,
    /// Description of an object.
    pub description: Option<String>,
    /// A handle to the object (release it with `Runtime.releaseObject`).
    pub object_id: Option<String>,
}

impl RemoteObject {
    /// The text a person would see in the console.
    pub fn text(&self) -> String {
        match &self.value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => self
                .description
                .clone()
                .or_else(|| self.unserializable_value.clone())
                .unwrap_or_else(|| self.kind.clone()),
            Some(v) => v.to_string(),
        }
    }
}

/// `Runtime.ExceptionDetails` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ExceptionDetails {
    /// Short text.
    pub text: Option<String>,
    /// The thrown value.
    pub exception: Option<RemoteObject>,
}

impl ExceptionDetails {
    /// The exception's description, else its text.
    pub fn describe(&self) -> Option<&str> {
        self.exception
            .as_ref()
            .and_then(|e| e.description.as_deref())
            .or(self.text.as_deref())
    }
}

/// `Runtime.exceptionThrown`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExceptionThrown {
    /// The exception.
    pub exception_details: ExceptionDetails,
}

/// `Log.LogEntry` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LogEntry {
    /// `verbose`, `info`, `warning`, `error`.
    pub level: Option<String>,
    /// The message.
    pub text: String,
    /// `network`, `javascript`, `intervention`, …
    pub source: Option<String>,
}

/// `Log.entryAdded`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EntryAdded {
    /// The entry.
    pub entry: LogEntry,
}

/// `Runtime.ExecutionContextDescription` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutionContext {
    /// Context id.
    pub id: Option<i64>,
    /// `{ frameId, isDefault, type }`.
    pub aux_data: ContextAux,
}

/// `auxData` of an execution context.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ContextAux {
    /// The frame it belongs to.
    pub frame_id: Option<String>,
    /// The frame's default (main world) context.
    pub is_default: bool,
}

/// `Runtime.executionContextCreated`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ContextCreated {
    /// The context.
    pub context: ExecutionContext,
}

/// `Runtime.executionContextDestroyed`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ContextDestroyed {
    /// The context that went away.
    pub execution_context_id: Option<i64>,
}

/// `Page.javascriptDialogOpening`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DialogOpening {
    /// `alert`, `confirm`, `prompt`, `beforeunload`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The dialog's message.
    pub message: String,
}

/// `Page.screencastFrame`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ScreencastFrame {
    /// Base64 JPEG.
    pub data: String,
    /// The frame number to acknowledge.
    pub session_id: i64,
}

/// `Input.dragIntercepted`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DragIntercepted {
    /// The drag data, replayed as is with `Input.dispatchDragEvent`.
    pub data: Value,
}

/// `Browser.downloadWillBegin`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DownloadWillBegin {
    /// The download's id (also its file name with `allowAndName`).
    pub guid: String,
    /// The name the page suggests.
    pub suggested_filename: String,
}

/// `Browser.downloadProgress`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DownloadProgress {
    /// The download's id.
    pub guid: String,
    /// Bytes received so far.
    pub received_bytes: f64,
    /// Expected total (0: unknown).
    pub total_bytes: f64,
    /// `inProgress`, `completed`, `canceled`.
    pub state: String,
}

impl DownloadProgress {
    /// Whether the download is over (completed or canceled).
    pub fn finished(&self) -> bool {
        matches!(self.state.as_str(), "canceled" | "completed")
    }
}

/// `Tracing.tracingComplete`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TracingComplete {
    /// Whether the trace buffer overflowed.
    pub data_loss_occurred: bool,
    /// The stream handle to read the trace from.
    pub stream: String,
}

/// `HeapProfiler.addHeapSnapshotChunk`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HeapSnapshotChunk {
    /// A piece of the snapshot's JSON.
    pub chunk: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in [
            Event::FetchRequestPaused,
            Event::RuntimeConsoleApiCalled,
            Event::HeapProfilerAddHeapSnapshotChunk,
        ] {
            assert_eq!(Event::parse(e.as_str()), Some(e));
        }
        assert_eq!(Event::parse("Page.frameNavigated"), None);
    }

    #[test]
    fn console_arguments_read_like_the_console() {
        let a: ConsoleApiCalled = serde_json::from_value(serde_json::json!({
            "type": "error",
            "args": [ { "type": "string", "value": "boom" }, { "type": "number", "value": 3 },
                      { "type": "object", "description": "Error: x" }, { "type": "undefined" } ]
        }))
        .unwrap();
        let t: Vec<String> = a.args.iter().map(RemoteObject::text).collect();
        assert_eq!(t, ["boom", "3", "Error: x", "undefined"]);
    }
}

//! Typed DevTools commands: one struct per method the driver calls, its
//! parameters serialized exactly as the protocol names them, and a lenient
//! response (`#[serde(default)]`: a field Chromium leaves out takes its
//! default). [`Cdp::call_typed`] sends one; the raw [`Cdp::call`] stays for
//! protocol drift and rare methods.

use super::events::{ExceptionDetails, RemoteObject};
use super::transport::{Cdp, CdpError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// A DevTools method: its name, its parameters (the implementing struct)
/// and the shape of its answer.
pub(crate) trait Command: Serialize {
    /// The protocol's method name, e.g. `Page.navigate`.
    const METHOD: &'static str;
    /// The answer's `result`.
    type Response: DeserializeOwned;
}

impl Cdp {
    /// Sends a typed command on `session` (`None`: the browser), bounded by
    /// 30 s.
    pub(crate) async fn call_typed<C: Command>(
        &self,
        session: Option<&str>,
        cmd: &C,
    ) -> Result<C::Response, CdpError> {
        self.call_typed_with_timeout(session, cmd, Duration::from_secs(30))
            .await
    }

    /// Sends a typed command, bounded by `timeout`.
    pub(crate) async fn call_typed_with_timeout<C: Command>(
        &self,
        session: Option<&str>,
        cmd: &C,
        timeout: Duration,
    ) -> Result<C::Response, CdpError> {
        let params = serde_json::to_value(cmd).map_err(|e| CdpError::Protocol {
            code: -32602,
            message: format!("{}: parameters not serializable: {e}", C::METHOD),
        })?;
        let raw = self.call_raw(session, C::METHOD, params, timeout).await?;
        decode::<C>(raw.get())
    }
}

/// The answer of `C`, read leniently (a missing `result` reads as `{}`).
fn decode<C: Command>(text: &str) -> Result<C::Response, CdpError> {
    let text = if text.trim() == "null" { "{}" } else { text };
    serde_json::from_str(text).map_err(|e| CdpError::Protocol {
        code: -32700,
        message: format!("unexpected answer to {}: {e}", C::METHOD),
    })
}

/// An answer the driver does not read.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Empty {}

macro_rules! no_params {
    ( $( $(#[$doc:meta])* $name:ident = $method:literal; )* ) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Default, Serialize)]
            pub(crate) struct $name {}

            impl Command for $name {
                const METHOD: &'static str = $method;
                type Response = Empty;
            }
        )*
    };
}

macro_rules! command {
    ($name:ident = $method:literal -> $resp:ty) => {
        impl Command for $name {
            const METHOD: &'static str = $method;
            type Response = $resp;
        }
    };
}

no_params! {
    /// `Browser.close`.
    BrowserClose = "Browser.close";
    /// `Tracing.end`.
    TracingEnd = "Tracing.end";
    /// `Network.enable`.
    NetworkEnable = "Network.enable";
    /// `Runtime.enable`.
    RuntimeEnable = "Runtime.enable";
    /// `Accessibility.enable`.
    AccessibilityEnable = "Accessibility.enable";
    /// `Page.enable`.
    PageEnable = "Page.enable";
    /// `Log.enable`.
    LogEnable = "Log.enable";
    /// `Runtime.runIfWaitingForDebugger`.
    RunIfWaitingForDebugger = "Runtime.runIfWaitingForDebugger";
    /// `Page.bringToFront`.
    BringToFront = "Page.bringToFront";
    /// `Page.reload`.
    Reload = "Page.reload";
    /// `HeapProfiler.enable`.
    HeapProfilerEnable = "HeapProfiler.enable";
    /// `HeapProfiler.disable`.
    HeapProfilerDisable = "HeapProfiler.disable";
}

// ------------------------------------------------------------ Target, Browser

/// `Target.setAutoAttach`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetAutoAttach {
    pub auto_attach: bool,
    pub wait_for_debugger_on_start: bool,
    pub flatten: bool,
    pub filter: Vec<TargetFilterEntry>,
}
command!(SetAutoAttach = "Target.setAutoAttach" -> Empty);

/// One entry of a `Target.TargetFilter`: the first entry whose `type`
/// matches a target decides whether it is attached.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetFilterEntry {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub exclude: bool,
}

impl TargetFilterEntry {
    const fn exclude(kind: &'static str) -> TargetFilterEntry {
        TargetFilterEntry {
            kind: Some(kind),
            exclude: true,
        }
    }
}

impl SetAutoAttach {
    /// Attach to every new target that can hold web content, paused, over
    /// a flat session: it runs only once it is contained.
    ///
    /// Not attached: the browser and tab targets (Chromium's own default
    /// filter) and `browser_ui` — Chromium's own top-chrome WebUI such as
    /// the omnibox popup, which no page can script or navigate and which
    /// loads only built-in `chrome://` resources. Intercepting its ~150
    /// module requests cost about a second per launch; whatever network
    /// traffic the browser makes still goes through the containment proxy.
    pub fn paused_flat() -> SetAutoAttach {
        SetAutoAttach {
            auto_attach: true,
            wait_for_debugger_on_start: true,
            flatten: true,
            filter: vec![
                TargetFilterEntry::exclude("browser"),
                TargetFilterEntry::exclude("tab"),
                TargetFilterEntry::exclude("browser_ui"),
                TargetFilterEntry {
                    kind: None,
                    exclude: false,
                },
            ],
        }
    }
}

/// `Browser.setDownloadBehavior` values.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum DownloadBehavior {
    /// Refuse every download.
    Deny,
    /// Save each download under its guid in `downloadPath`.
    AllowAndName,
}

/// `Browser.setDownloadBehavior`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetDownloadBehavior {
    pub behavior: DownloadBehavior,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub download_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events_enabled: Option<bool>,
    /// The context it applies to (`None`: the browser's default one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
command!(SetDownloadBehavior = "Browser.setDownloadBehavior" -> Empty);

impl SetDownloadBehavior {
    /// Downloads denied (the session default).
    pub fn deny() -> SetDownloadBehavior {
        SetDownloadBehavior {
            behavior: DownloadBehavior::Deny,
            download_path: None,
            events_enabled: None,
            browser_context_id: None,
        }
    }
}

/// `Browser.cancelDownload`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CancelDownload {
    pub guid: String,
}
command!(CancelDownload = "Browser.cancelDownload" -> Empty);

/// `Target.createTarget`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTarget {
    pub url: String,
    /// The browser context to open it in (`None`: the default one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
command!(CreateTarget = "Target.createTarget" -> Empty);

/// `Target.createBrowserContext`: a context of the run's own in a browser
/// it did not start.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateBrowserContext {
    /// The context (and every page in it) goes when the connection does.
    pub dispose_on_detach: bool,
    /// Every connection of the context's pages goes through this proxy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_server: Option<String>,
    /// Hosts the proxy is bypassed for (`<-loopback>`: none, not even
    /// loopback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_bypass_list: Option<String>,
}
command!(CreateBrowserContext = "Target.createBrowserContext" -> CreatedBrowserContext);

/// The answer of `Target.createBrowserContext`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct CreatedBrowserContext {
    pub browser_context_id: String,
}

/// `Target.disposeBrowserContext`: closes every page of the context.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DisposeBrowserContext {
    pub browser_context_id: String,
}
command!(DisposeBrowserContext = "Target.disposeBrowserContext" -> Empty);

/// `Target.setDiscoverTargets`: `Target.targetCreated` for every target
/// (the run attaches only to its own context's).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetDiscoverTargets {
    pub discover: bool,
}
command!(SetDiscoverTargets = "Target.setDiscoverTargets" -> Empty);

/// `Target.getTargetInfo`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTargetInfo {
    pub target_id: String,
}
command!(GetTargetInfo = "Target.getTargetInfo" -> GotTargetInfo);

/// The answer of `Target.getTargetInfo`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct GotTargetInfo {
    pub target_info: super::events::TargetInfo,
}

/// `Target.getTargets`.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct GetTargets {}
command!(GetTargets = "Target.getTargets" -> GotTargets);

/// The answer of `Target.getTargets`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct GotTargets {
    pub target_infos: Vec<super::events::TargetInfo>,
}

/// `Target.attachToTarget` (flat session).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AttachToTarget {
    pub target_id: String,
    pub flatten: bool,
}
command!(AttachToTarget = "Target.attachToTarget" -> Empty);

/// `Target.closeTarget`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CloseTarget {
    pub target_id: String,
}
command!(CloseTarget = "Target.closeTarget" -> Empty);

// ------------------------------------------------------------------ Emulation

/// `Emulation.setDeviceMetricsOverride`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetDeviceMetricsOverride {
    pub width: u32,
    pub height: u32,
    pub device_scale_factor: u32,
    pub mobile: bool,
}
command!(SetDeviceMetricsOverride = "Emulation.setDeviceMetricsOverride" -> Empty);

/// `Emulation.setScrollbarsHidden` (an owned browser hides them with
/// `--hide-scrollbars`; an attached one per page).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetScrollbarsHidden {
    pub hidden: bool,
}
command!(SetScrollbarsHidden = "Emulation.setScrollbarsHidden" -> Empty);

/// `Emulation.setLocaleOverride`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetLocaleOverride {
    pub locale: String,
}
command!(SetLocaleOverride = "Emulation.setLocaleOverride" -> Empty);

/// `Emulation.setTimezoneOverride`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetTimezoneOverride {
    pub timezone_id: String,
}
command!(SetTimezoneOverride = "Emulation.setTimezoneOverride" -> Empty);

/// One emulated media feature.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MediaFeature {
    pub name: &'static str,
    pub value: &'static str,
}

/// `Emulation.setEmulatedMedia`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetEmulatedMedia {
    pub features: Vec<MediaFeature>,
}
command!(SetEmulatedMedia = "Emulation.setEmulatedMedia" -> Empty);

// --------------------------------------------------------------------- Fetch

/// One `Fetch.RequestPattern`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestPattern {
    pub url_pattern: &'static str,
    pub request_stage: &'static str,
}

/// `Fetch.enable`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FetchEnable {
    pub patterns: Vec<RequestPattern>,
}
command!(FetchEnable = "Fetch.enable" -> Empty);

impl FetchEnable {
    /// Pause every request before it is sent.
    pub fn every_request() -> FetchEnable {
        FetchEnable {
            patterns: vec![RequestPattern {
                url_pattern: "*",
                request_stage: "Request",
            }],
        }
    }
}

/// `Fetch.continueRequest`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContinueRequest {
    pub request_id: String,
    /// Replaces the request's headers (an auth profile's header added).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HeaderEntry>>,
}
command!(ContinueRequest = "Fetch.continueRequest" -> Empty);

/// `Fetch.HeaderEntry`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HeaderEntry {
    pub name: String,
    pub value: String,
}

/// `Fetch.fulfillRequest`: answers a paused request without the network.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FulfillRequest {
    pub request_id: String,
    pub response_code: u16,
    pub response_headers: Vec<HeaderEntry>,
    /// Base64 body.
    pub body: String,
}
command!(FulfillRequest = "Fetch.fulfillRequest" -> Empty);

/// `Fetch.failRequest`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FailRequest {
    pub request_id: String,
    pub error_reason: &'static str,
}
command!(FailRequest = "Fetch.failRequest" -> Empty);

// ------------------------------------------------------------------- Network

/// `Network.setCookie`, bound to one exact origin (`url` with no `domain`
/// makes a host-only cookie; `sourceScheme`/`sourcePort` bind it to the
/// scheme and port when origin-bound cookies are on).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetCookie {
    pub name: String,
    pub value: String,
    pub url: String,
    pub path: String,
    pub secure: bool,
    pub http_only: bool,
    pub same_site: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    pub source_scheme: &'static str,
    pub source_port: u16,
}

/// The answer of `Network.setCookie`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SetCookieResult {
    pub success: Option<bool>,
}
command!(SetCookie = "Network.setCookie" -> SetCookieResult);

/// `Network.getCookies` for some URLs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GetCookies {
    pub urls: Vec<String>,
}

/// One cookie as `Network.getCookies` reports it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct CdpCookie {
    pub name: String,
    pub value: String,
    pub domain: String,
    pub path: String,
    pub expires: f64,
    pub http_only: bool,
    pub secure: bool,
    pub same_site: Option<String>,
}

/// The answer of `Network.getCookies`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Cookies {
    pub cookies: Vec<CdpCookie>,
}
command!(GetCookies = "Network.getCookies" -> Cookies);

no_params! {
    /// `Network.clearBrowserCookies`.
    ClearBrowserCookies = "Network.clearBrowserCookies";
}

/// `Network.setBypassServiceWorker`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetBypassServiceWorker {
    pub bypass: bool,
}
command!(SetBypassServiceWorker = "Network.setBypassServiceWorker" -> Empty);

/// One pattern of `Network.setBlockedURLs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockPattern {
    pub url_pattern: String,
    pub block: bool,
}

/// `Network.setBlockedURLs`: ordered patterns (newer protocol) or plain
/// URL globs (older protocol).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetBlockedUrls {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_patterns: Option<Vec<BlockPattern>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urls: Option<Vec<String>>,
}
command!(SetBlockedUrls = "Network.setBlockedURLs" -> Empty);

// ------------------------------------------------------------------- Runtime

/// `Runtime.addBinding`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AddBinding {
    pub name: &'static str,
}
command!(AddBinding = "Runtime.addBinding" -> Empty);

/// `Runtime.evaluate`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Evaluate {
    pub expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_by_value: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<i64>,
}
command!(Evaluate = "Runtime.evaluate" -> Evaluated);

impl Evaluate {
    /// An expression, evaluated as is.
    pub fn expression(expression: impl Into<String>) -> Evaluate {
        Evaluate {
            expression: expression.into(),
            ..Default::default()
        }
    }
}

/// The answer of `Runtime.evaluate` and `Runtime.callFunctionOn`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Evaluated {
    pub result: RemoteObject,
    pub exception_details: Option<ExceptionDetails>,
}

/// One argument of `Runtime.callFunctionOn`, spelled like the protocol's
/// `CallArgument`: `{"value": …}` or `{"objectId": …}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum CallArgument {
    /// A value passed by value.
    Value(Value),
    /// A remote object passed by reference.
    ObjectId(String),
}

/// `Runtime.callFunctionOn`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallFunctionOn {
    pub function_declaration: String,
    pub object_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<CallArgument>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_by_value: Option<bool>,
}
command!(CallFunctionOn = "Runtime.callFunctionOn" -> Evaluated);

/// `Runtime.releaseObject`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReleaseObject {
    pub object_id: String,
}
command!(ReleaseObject = "Runtime.releaseObject" -> Empty);

/// `Runtime.releaseObjectGroup`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReleaseObjectGroup {
    pub object_group: &'static str,
}
command!(ReleaseObjectGroup = "Runtime.releaseObjectGroup" -> Empty);

/// `Runtime.getHeapUsage` (the answer is kept as the protocol gives it).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct GetHeapUsage {}
command!(GetHeapUsage = "Runtime.getHeapUsage" -> Value);

/// `Memory.getDOMCounters` (the answer is kept as the protocol gives it).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct GetDomCounters {}
command!(GetDomCounters = "Memory.getDOMCounters" -> Value);

// ---------------------------------------------------------------------- Page

/// `Page.addScriptToEvaluateOnNewDocument`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AddScriptToEvaluateOnNewDocument {
    pub source: String,
    pub run_immediately: bool,
    /// An isolated world of this name (`None`: the page's main world).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world_name: Option<&'static str>,
}
command!(AddScriptToEvaluateOnNewDocument = "Page.addScriptToEvaluateOnNewDocument" -> Empty);

/// `Page.handleJavaScriptDialog`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HandleJavaScriptDialog {
    pub accept: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
}
command!(HandleJavaScriptDialog = "Page.handleJavaScriptDialog" -> Empty);

/// `Page.navigate`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Navigate {
    pub url: String,
}
command!(Navigate = "Page.navigate" -> Navigated);

/// The answer of `Page.navigate`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Navigated {
    /// Set when a document load started (absent for same-document moves).
    pub loader_id: Option<String>,
    /// Set when the navigation failed.
    pub error_text: Option<String>,
}

/// `Page.getLayoutMetrics`.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct GetLayoutMetrics {}
command!(GetLayoutMetrics = "Page.getLayoutMetrics" -> LayoutMetrics);

/// The answer of `Page.getLayoutMetrics`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LayoutMetrics {
    pub css_content_size: Size,
}

/// A CSS size.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Size {
    pub width: f64,
    pub height: f64,
}

/// A screenshot clip.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Clip {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub scale: u32,
}

/// `Page.captureScreenshot` (PNG, or JPEG for video frames).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CaptureScreenshot {
    pub format: &'static str,
    pub from_surface: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<Clip>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_beyond_viewport: Option<bool>,
}
command!(CaptureScreenshot = "Page.captureScreenshot" -> Screenshot);

/// `Page.startScreencast`: a frame each time the page paints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartScreencast {
    pub format: &'static str,
    pub quality: u32,
    pub max_width: u32,
    pub max_height: u32,
    pub every_nth_frame: u32,
}
command!(StartScreencast = "Page.startScreencast" -> Empty);

/// `Page.screencastFrameAck`: the next frame may come.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScreencastFrameAck {
    pub session_id: i64,
}
command!(ScreencastFrameAck = "Page.screencastFrameAck" -> Empty);

impl CaptureScreenshot {
    /// A JPEG of the viewport (video frames).
    pub fn jpeg() -> CaptureScreenshot {
        CaptureScreenshot {
            format: "jpeg",
            from_surface: true,
            capture_beyond_viewport: None,
            clip: None,
        }
    }

    /// A PNG of the viewport (`None`) or of a clip beyond it.
    pub fn png(clip: Option<Clip>) -> CaptureScreenshot {
        CaptureScreenshot {
            format: "png",
            from_surface: true,
            capture_beyond_viewport: clip.as_ref().map(|_| true),
            clip,
        }
    }
}

/// The answer of `Page.captureScreenshot`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Screenshot {
    /// Base64 PNG.
    pub data: String,
}

// ----------------------------------------------------------------------- DOM

/// `DOM.describeNode`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DescribeNode {
    pub object_id: String,
}
command!(DescribeNode = "DOM.describeNode" -> Described);

/// `DOM.describeNode` of a backend node.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DescribeBackendNode {
    pub backend_node_id: i64,
}
command!(DescribeBackendNode = "DOM.describeNode" -> Described);

/// `DOM.getBoxModel` of a backend node.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetBoxModel {
    pub backend_node_id: i64,
}

/// The answer of `DOM.getBoxModel`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BoxModelResult {
    pub model: BoxModel,
}

/// A `DOM.BoxModel` (the border quad).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BoxModel {
    pub border: Vec<f64>,
}
command!(GetBoxModel = "DOM.getBoxModel" -> BoxModelResult);

/// The answer of `DOM.describeNode`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Described {
    pub node: Node,
}

/// A `DOM.Node` (the fields the driver reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Node {
    pub backend_node_id: Option<i64>,
    /// Attribute names and values, alternating.
    pub attributes: Vec<String>,
    /// The frame a frame owner element (`<iframe>`) hosts.
    pub frame_id: Option<String>,
}

/// `DOM.resolveNode` (without a context: in the main world of the node's
/// frame).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResolveNode {
    pub backend_node_id: i64,
    pub object_group: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_context_id: Option<i64>,
}
command!(ResolveNode = "DOM.resolveNode" -> Resolved);

/// The answer of `DOM.resolveNode`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Resolved {
    pub object: RemoteObject,
}

/// `DOM.setFileInputFiles`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetFileInputFiles {
    pub files: Vec<String>,
    pub object_id: String,
}
command!(SetFileInputFiles = "DOM.setFileInputFiles" -> Empty);

/// `DOMSnapshot.captureSnapshot` (the answer is read by the secret scan
/// as the protocol gives it: its tables are indexed, not keyed).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CaptureSnapshot {
    pub computed_styles: Vec<String>,
}
command!(CaptureSnapshot = "DOMSnapshot.captureSnapshot" -> Value);

/// `Accessibility.getFullAXTree` (nodes kept raw: the typed bindings of
/// other clients lag Chromium's enum of ignored reasons).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetFullAxTree {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
}
command!(GetFullAxTree = "Accessibility.getFullAXTree" -> AxTree);

/// The answer of `Accessibility.getFullAXTree`, `getChildAXNodes` and
/// `getPartialAXTree`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AxTree {
    pub nodes: Vec<Value>,
}

/// `Accessibility.getRootAXNode` (of the page, or of one frame).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetRootAxNode {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
}
command!(GetRootAxNode = "Accessibility.getRootAXNode" -> AxRoot);

/// The answer of `Accessibility.getRootAXNode`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AxRoot {
    pub node: Value,
}

/// `Accessibility.getChildAXNodes`: the children of one node, ignored
/// ones included.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetChildAxNodes {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
}
command!(GetChildAxNodes = "Accessibility.getChildAXNodes" -> AxNodesText);

/// The answer of `Accessibility.getChildAXNodes` with each node kept as
/// its JSON text: a list of tens of thousands of items answers with every
/// item, and a walk that keeps a few thousand reads only those.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AxNodesText {
    pub nodes: Vec<Box<serde_json::value::RawValue>>,
}

/// `Accessibility.getPartialAXTree` of one DOM node, without relatives.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetPartialAxTree {
    pub backend_node_id: i64,
    pub fetch_relatives: bool,
}
command!(GetPartialAxTree = "Accessibility.getPartialAXTree" -> AxTree);

// --------------------------------------------------------------------- Input

/// `Input.dispatchMouseEvent` types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum MouseEventType {
    #[serde(rename = "mouseMoved")]
    Moved,
    #[serde(rename = "mousePressed")]
    Pressed,
    #[serde(rename = "mouseReleased")]
    Released,
    #[serde(rename = "mouseWheel")]
    Wheel,
}

/// Mouse buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum MouseButton {
    None,
    Left,
}

/// `Input.dispatchMouseEvent`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DispatchMouseEvent {
    #[serde(rename = "type")]
    pub kind: MouseEventType,
    pub x: f64,
    pub y: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buttons: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub click_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_x: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_y: Option<f64>,
}
command!(DispatchMouseEvent = "Input.dispatchMouseEvent" -> Empty);

impl DispatchMouseEvent {
    /// A bare event of `kind` at (x, y).
    pub fn at(kind: MouseEventType, x: f64, y: f64) -> DispatchMouseEvent {
        DispatchMouseEvent {
            kind,
            x,
            y,
            button: None,
            buttons: None,
            click_count: None,
            delta_x: None,
            delta_y: None,
        }
    }
}

/// `Input.dispatchKeyEvent` types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum KeyEventType {
    KeyDown,
    RawKeyDown,
    KeyUp,
}

/// `Input.dispatchKeyEvent`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DispatchKeyEvent {
    #[serde(rename = "type")]
    pub kind: KeyEventType,
    pub key: String,
    pub code: String,
    pub windows_virtual_key_code: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modifiers: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmodified_text: Option<String>,
}
command!(DispatchKeyEvent = "Input.dispatchKeyEvent" -> Empty);

/// `Input.insertText`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InsertText {
    pub text: String,
}
command!(InsertText = "Input.insertText" -> Empty);

/// `Input.setInterceptDrags`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetInterceptDrags {
    pub enabled: bool,
}
command!(SetInterceptDrags = "Input.setInterceptDrags" -> Empty);

/// `Input.dispatchDragEvent` types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum DragEventType {
    DragEnter,
    DragOver,
    Drop,
}

/// `Input.dispatchDragEvent`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DispatchDragEvent {
    #[serde(rename = "type")]
    pub kind: DragEventType,
    pub x: f64,
    pub y: f64,
    pub data: Value,
    pub modifiers: u8,
}
command!(DispatchDragEvent = "Input.dispatchDragEvent" -> Empty);

// ------------------------------------------------------ Tracing, IO, heap

/// `Tracing.TraceConfig` (the fields the driver sets).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TraceConfig {
    pub record_mode: &'static str,
    pub trace_buffer_size_in_kb: u32,
    pub included_categories: &'static [&'static str],
}

/// `Tracing.start`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TracingStart {
    pub transfer_mode: &'static str,
    pub stream_format: &'static str,
    pub trace_config: TraceConfig,
}
command!(TracingStart = "Tracing.start" -> Empty);

/// `IO.read`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IoRead {
    pub handle: String,
    pub size: u32,
}
command!(IoRead = "IO.read" -> IoChunk);

/// The answer of `IO.read`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct IoChunk {
    pub data: String,
    pub base64_encoded: bool,
    pub eof: bool,
}

/// `IO.close`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IoClose {
    pub handle: String,
}
command!(IoClose = "IO.close" -> Empty);

/// `HeapProfiler.takeHeapSnapshot` (chunks arrive as events).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TakeHeapSnapshot {
    pub report_progress: bool,
    pub capture_numeric_value: bool,
}
command!(TakeHeapSnapshot = "HeapProfiler.takeHeapSnapshot" -> Empty);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_are_spelled_like_the_protocol() {
        let m = DispatchMouseEvent {
            button: Some(MouseButton::Left),
            buttons: Some(1),
            click_count: Some(2),
            ..DispatchMouseEvent::at(MouseEventType::Pressed, 1.0, 2.5)
        };
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({ "type": "mousePressed", "x": 1.0, "y": 2.5, "button": "left", "buttons": 1, "clickCount": 2 })
        );
        assert_eq!(
            serde_json::to_value(SetAutoAttach::paused_flat()).unwrap(),
            json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true,
                "filter": [{ "type": "browser", "exclude": true }, { "type": "tab", "exclude": true },
                           { "type": "browser_ui", "exclude": true }, { "exclude": false }] })
        );
        let args = vec![
            CallArgument::Value(json!("x")),
            CallArgument::ObjectId("7".into()),
        ];
        assert_eq!(
            serde_json::to_value(args).unwrap(),
            json!([{ "value": "x" }, { "objectId": "7" }])
        );
        assert_eq!(
            serde_json::to_value(CaptureScreenshot::png(None)).unwrap(),
            json!({ "format": "png", "fromSurface": true })
        );
    }

    #[test]
    fn answers_are_lenient() {
        let n: Navigated = decode::<Navigate>("null").unwrap();
        assert!(n.loader_id.is_none() && n.error_text.is_none());
        let e: Evaluated =
            decode::<Evaluate>(r#"{ "result": { "type": "number", "value": 3 } }"#).unwrap();
        assert_eq!(e.result.value, Some(json!(3)));
        assert!(decode::<IoRead>(r#"{ "eof": "yes" }"#).is_err());
    }
}

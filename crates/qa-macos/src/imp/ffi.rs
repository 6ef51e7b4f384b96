//! Every call into the Accessibility API, CoreFoundation and CGEvent: one
//! of the crate's two modules with `unsafe` (the other is `objc`).
//!
//! [`AxElement`] owns one `AXUIElementRef` (a CoreFoundation object:
//! retained on clone, released on drop, compared with `CFEqual`). The AX
//! API is a client of the target's accessibility server over Mach
//! messages and may be called from any thread; the driver calls it from
//! blocking threads only, never on the async executor, and every message
//! is bounded by the messaging timeout set once ([`set_messaging_timeout`]).

#![allow(unsafe_code)]

use crate::element::Value;
use crate::keycodes::KeyEvent;
use accessibility_sys::{
    error_string, kAXErrorCannotComplete, kAXErrorInvalidUIElement, kAXErrorNoValue,
    kAXErrorSuccess, kAXValueTypeCGPoint, kAXValueTypeCGSize, AXError, AXUIElementCopyActionNames,
    AXUIElementCopyAttributeValue, AXUIElementCopyMultipleAttributeValues,
    AXUIElementCreateApplication, AXUIElementCreateSystemWide, AXUIElementGetTypeID,
    AXUIElementIsAttributeSettable, AXUIElementPerformAction, AXUIElementRef,
    AXUIElementSetAttributeValue, AXUIElementSetMessagingTimeout, AXValueGetType, AXValueGetTypeID,
    AXValueGetValue, AXValueRef,
};
use core_foundation::array::{CFArray, CFArrayRef};
use core_foundation::base::{CFEqual, CFRelease, CFRetain, CFType, CFTypeRef, TCFType};
use core_foundation::boolean::CFBoolean;
use core_foundation::number::CFNumber;
use core_foundation::string::CFString;
use core_graphics::event::{CGEvent, CGEventFlags, CGEventTapLocation, CGEventType, CGMouseButton};
use core_graphics::event_source::{CGEventSource, CGEventSourceStateID};
use core_graphics::geometry::{CGPoint, CGSize};
use std::ffi::c_void;
use std::time::Duration;

/// Pause between synthetic events, so the target's event queue keeps up.
const EVENT_GAP: Duration = Duration::from_millis(3);

/// An error the AX API answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AxError(pub AXError);

impl AxError {
    /// The element no longer exists.
    pub fn gone(self) -> bool {
        self.0 == kAXErrorInvalidUIElement
    }

    /// The application did not answer within the messaging timeout (or
    /// cannot be messaged at all).
    pub fn timed_out(self) -> bool {
        self.0 == kAXErrorCannotComplete
    }
}

impl std::fmt::Display for AxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", error_string(self.0), self.0)
    }
}

fn check(e: AXError) -> Result<(), AxError> {
    if e == kAXErrorSuccess {
        Ok(())
    } else {
        Err(AxError(e))
    }
}

/// One accessibility element, owned.
pub(crate) struct AxElement(AXUIElementRef);

// SAFETY: an AXUIElementRef is an immutable CoreFoundation object (a
// process id and an opaque token); CFRetain/CFRelease are thread-safe and
// the AX functions may be called with it from any thread.
unsafe impl Send for AxElement {}
// SAFETY: as above; no method mutates the object through `&self`.
unsafe impl Sync for AxElement {}

impl Clone for AxElement {
    fn clone(&self) -> Self {
        // SAFETY: self.0 is a valid, retained AXUIElementRef.
        unsafe { CFRetain(self.0 as CFTypeRef) };
        AxElement(self.0)
    }
}

impl Drop for AxElement {
    fn drop(&mut self) {
        // SAFETY: we own one reference (create rule, or retained on get).
        unsafe { CFRelease(self.0 as CFTypeRef) };
    }
}

impl PartialEq for AxElement {
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: both are valid CF objects; CFEqual only compares them.
        unsafe { CFEqual(self.0 as CFTypeRef, other.0 as CFTypeRef) != 0 }
    }
}

impl std::fmt::Debug for AxElement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AXUIElement({:p})", self.0)
    }
}

/// What one attribute held.
pub(crate) enum Attr {
    /// A plain value.
    Value(Value),
    /// Elements (`AXChildren`, `AXWindows`; one for `AXParent`).
    Elements(Vec<AxElement>),
}

/// Converts a value the AX API handed back (get rule: not consumed).
fn convert(v: CFTypeRef) -> Option<Attr> {
    if v.is_null() {
        return None;
    }
    // SAFETY: v is a valid CF object the caller keeps alive; the get rule
    // retains it for the wrapper's lifetime.
    let t = unsafe { CFType::wrap_under_get_rule(v) };
    let id = t.type_of();
    if id == CFString::type_id() {
        return t
            .downcast::<CFString>()
            .map(|s| Attr::Value(Value::Text(s.to_string())));
    }
    if id == CFBoolean::type_id() {
        return t
            .downcast::<CFBoolean>()
            .map(|b| Attr::Value(Value::Bool(b.into())));
    }
    if id == CFNumber::type_id() {
        return t
            .downcast::<CFNumber>()
            .and_then(|n| n.to_f64())
            .map(|n| Attr::Value(Value::Number(n)));
    }
    // SAFETY: plain type-id getters.
    let (ax_value, ax_element) = unsafe { (AXValueGetTypeID(), AXUIElementGetTypeID()) };
    if id == ax_element {
        // SAFETY: v is an AXUIElementRef (checked type id); retain it for
        // the AxElement we hand out.
        unsafe { CFRetain(v) };
        return Some(Attr::Elements(vec![AxElement(v as AXUIElementRef)]));
    }
    if id == ax_value {
        let av = v as AXValueRef;
        // SAFETY: av is an AXValueRef (checked type id); the out pointers
        // are to locals of the type the value type names.
        unsafe {
            match AXValueGetType(av) {
                t if t == kAXValueTypeCGPoint => {
                    let mut p = CGPoint::new(0.0, 0.0);
                    if AXValueGetValue(av, t, &mut p as *mut CGPoint as *mut c_void) {
                        return Some(Attr::Value(Value::Point(p.x, p.y)));
                    }
                }
                t if t == kAXValueTypeCGSize => {
                    let mut s = CGSize::new(0.0, 0.0);
                    if AXValueGetValue(av, t, &mut s as *mut CGSize as *mut c_void) {
                        return Some(Attr::Value(Value::Size(s.width, s.height)));
                    }
                }
                // kAXValueTypeAXError: this attribute failed in a batch.
                _ => {}
            }
        }
        return None;
    }
    if id == CFArray::<CFType>::type_id() {
        // SAFETY: v is a CFArray (checked type id); get rule.
        let arr: CFArray<CFType> = unsafe { CFArray::wrap_under_get_rule(v as CFArrayRef) };
        let items = arr
            .iter()
            .filter(|x| x.type_of() == ax_element)
            .map(|x| {
                let r = x.as_CFTypeRef();
                // SAFETY: r is an AXUIElementRef (checked); retained for
                // the AxElement.
                unsafe { CFRetain(r) };
                AxElement(r as AXUIElementRef)
            })
            .collect();
        return Some(Attr::Elements(items));
    }
    None
}

impl AxElement {
    /// The application element of process `pid`.
    pub fn application(pid: i32) -> Option<AxElement> {
        // SAFETY: creates a new object (create rule) or null.
        let r = unsafe { AXUIElementCreateApplication(pid) };
        (!r.is_null()).then_some(AxElement(r))
    }

    /// Many attributes in one message (`AXUIElementCopyMultipleAttributeValues`):
    /// one answer per name, `None` where the attribute is unsupported, has
    /// no value or failed. An error: the whole element failed (gone, or
    /// the application did not answer).
    pub fn read(&self, names: &[&str]) -> Result<Vec<Option<Attr>>, AxError> {
        let keys: Vec<CFString> = names.iter().map(|n| CFString::new(n)).collect();
        let arr = CFArray::from_CFTypes(&keys);
        let mut out: CFArrayRef = std::ptr::null();
        // SAFETY: self.0 and arr are valid; out receives a +1 array
        // (create rule) on success. Options 0: a failing attribute yields
        // an AXValue error in its slot instead of failing the call.
        check(unsafe {
            AXUIElementCopyMultipleAttributeValues(self.0, arr.as_concrete_TypeRef(), 0, &mut out)
        })?;
        if out.is_null() {
            return Err(AxError(kAXErrorNoValue));
        }
        // SAFETY: out is a new CFArray we own (create rule).
        let values: CFArray<CFType> = unsafe { CFArray::wrap_under_create_rule(out) };
        Ok((0..names.len())
            .map(|i| {
                values
                    .get(i as isize)
                    .and_then(|v| convert(v.as_CFTypeRef()))
            })
            .collect())
    }

    /// One attribute (`None`: unsupported or no value).
    pub fn attribute(&self, name: &str) -> Result<Option<Attr>, AxError> {
        let key = CFString::new(name);
        let mut out: CFTypeRef = std::ptr::null();
        // SAFETY: valid element and key; out receives a +1 value.
        let e =
            unsafe { AXUIElementCopyAttributeValue(self.0, key.as_concrete_TypeRef(), &mut out) };
        if e != kAXErrorSuccess {
            return if e == kAXErrorInvalidUIElement || e == kAXErrorCannotComplete {
                Err(AxError(e))
            } else {
                Ok(None)
            };
        }
        if out.is_null() {
            return Ok(None);
        }
        // SAFETY: out is a +1 value we own: wrap it so it is released.
        let owned = unsafe { CFType::wrap_under_create_rule(out) };
        Ok(convert(owned.as_CFTypeRef()))
    }

    /// A boolean attribute (`None`: not there).
    pub fn flag(&self, name: &str) -> Result<Option<bool>, AxError> {
        Ok(match self.attribute(name)? {
            Some(Attr::Value(Value::Bool(b))) => Some(b),
            Some(Attr::Value(Value::Number(n))) => Some(n != 0.0),
            _ => None,
        })
    }

    /// A plain value attribute.
    pub fn value(&self, name: &str) -> Result<Option<Value>, AxError> {
        Ok(match self.attribute(name)? {
            Some(Attr::Value(v)) => Some(v),
            _ => None,
        })
    }

    /// The element's action names.
    pub fn actions(&self) -> Result<Vec<String>, AxError> {
        let mut out: CFArrayRef = std::ptr::null();
        // SAFETY: valid element; out receives a +1 array.
        check(unsafe { AXUIElementCopyActionNames(self.0, &mut out) })?;
        if out.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: a new CFArray of CFStrings we own.
        let names: CFArray<CFType> = unsafe { CFArray::wrap_under_create_rule(out) };
        Ok(names
            .iter()
            .filter_map(|n| n.downcast::<CFString>().map(|s| s.to_string()))
            .collect())
    }

    /// Whether an attribute can be written.
    pub fn settable(&self, name: &str) -> bool {
        let key = CFString::new(name);
        let mut out: u8 = 0;
        // SAFETY: valid element and key; out is a Boolean.
        let e =
            unsafe { AXUIElementIsAttributeSettable(self.0, key.as_concrete_TypeRef(), &mut out) };
        e == kAXErrorSuccess && out != 0
    }

    /// Performs an action.
    pub fn perform(&self, action: &str) -> Result<(), AxError> {
        let key = CFString::new(action);
        // SAFETY: valid element and action name.
        check(unsafe { AXUIElementPerformAction(self.0, key.as_concrete_TypeRef()) })
    }

    fn set(&self, name: &str, value: CFTypeRef) -> Result<(), AxError> {
        let key = CFString::new(name);
        // SAFETY: valid element, key and value (kept alive by the caller).
        check(unsafe { AXUIElementSetAttributeValue(self.0, key.as_concrete_TypeRef(), value) })
    }

    /// Writes a boolean attribute.
    pub fn set_flag(&self, name: &str, on: bool) -> Result<(), AxError> {
        let v = if on {
            CFBoolean::true_value()
        } else {
            CFBoolean::false_value()
        };
        self.set(name, v.as_CFTypeRef())
    }

    /// Writes a text attribute.
    pub fn set_text(&self, name: &str, text: &str) -> Result<(), AxError> {
        let v = CFString::new(text);
        self.set(name, v.as_CFTypeRef())
    }

    /// Writes a number attribute.
    pub fn set_number(&self, name: &str, n: f64) -> Result<(), AxError> {
        let v = CFNumber::from(n);
        self.set(name, v.as_CFTypeRef())
    }
}

/// Bounds every AX message of this process (the system-wide element's
/// timeout is the global one), so a hung application fails a call with
/// `kAXErrorCannotComplete` instead of hanging a step.
pub(crate) fn set_messaging_timeout(seconds: f32) {
    // SAFETY: creates the system-wide element (+1), sets its timeout and
    // releases it.
    unsafe {
        let sys = AXUIElementCreateSystemWide();
        if !sys.is_null() {
            AXUIElementSetMessagingTimeout(sys, seconds);
            CFRelease(sys as CFTypeRef);
        }
    }
}

/// Posts keyboard events to the system's event stream (the focused
/// window receives them). A character without a key code is sent as a
/// Unicode string (`CGEventKeyboardSetUnicodeString`).
pub(crate) fn post_keys(events: &[KeyEvent]) -> Result<(), String> {
    let src = CGEventSource::new(CGEventSourceStateID::HIDSystemState)
        .map_err(|_| "CGEventSourceCreate failed".to_string())?;
    for e in events {
        let (code, up, flags, ch) = match *e {
            KeyEvent::Code { code, up, flags } => (code, up, flags, None),
            KeyEvent::Char { c, up, flags } => (0, up, flags, Some(c)),
        };
        let ev = CGEvent::new_keyboard_event(src.clone(), code, !up)
            .map_err(|_| "CGEventCreateKeyboardEvent failed".to_string())?;
        ev.set_flags(CGEventFlags::from_bits_truncate(flags));
        if let Some(c) = ch {
            ev.set_string(&c.to_string());
        }
        ev.post(CGEventTapLocation::HID);
        std::thread::sleep(EVENT_GAP);
    }
    Ok(())
}

/// A left click at a point in global display coordinates (points,
/// top-left origin: AX's own).
pub(crate) fn click_at(x: f64, y: f64) -> Result<(), String> {
    let src = CGEventSource::new(CGEventSourceStateID::HIDSystemState)
        .map_err(|_| "CGEventSourceCreate failed".to_string())?;
    let at = CGPoint::new(x, y);
    for kind in [
        CGEventType::MouseMoved,
        CGEventType::LeftMouseDown,
        CGEventType::LeftMouseUp,
    ] {
        let ev = CGEvent::new_mouse_event(src.clone(), kind, at, CGMouseButton::Left)
            .map_err(|_| "CGEventCreateMouseEvent failed".to_string())?;
        ev.post(CGEventTapLocation::HID);
        std::thread::sleep(EVENT_GAP * 10);
    }
    Ok(())
}

/// Connects this process to the window server (ScreenCaptureKit asserts
/// on a command-line process that never did).
pub(crate) fn touch_window_server() {
    let _ = core_graphics::display::CGDisplay::main();
}
